// The SG lab's part of the binding (lab 1): the page / entry rule per element, the list generators, and a strategy
// run on a session. Same conventions as addon.cpp: { err, msg, value } results, TypeError for wrong argument types.
#pragma once
#include <napi.h>

#include "vl/session.h"

namespace vladdon {
Napi::Value SgCheck(const Napi::CallbackInfo& info);      // sgCheck({ sg: [{addr, length}], pageSize?, maxNumSg?, indirect? })
Napi::Value SgGenerate(const Napi::CallbackInfo& info);   // sgGenerate({ pattern, n, total, seed? })
Napi::Value SgLabRun(const Napi::CallbackInfo& info, vl::Session& s);   // session.sg_lab_run(list, strategy, config?)
}  // namespace vladdon
