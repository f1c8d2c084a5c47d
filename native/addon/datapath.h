// The session's data path (vl::DataPath, docs/perf.md): session.set_data_path('fast' | 'strict') and
// session.data_path(). Same conventions as addon.cpp: { err, msg } results, TypeError for wrong argument types.
#pragma once
#include <napi.h>

#include "vl/session.h"

namespace vladdon {
Napi::Value SetDataPath(const Napi::CallbackInfo& info, vl::Session& s);   // session.set_data_path(path): NStatus
Napi::Value GetDataPath(const Napi::CallbackInfo& info, vl::Session& s);   // session.data_path(): 'fast' | 'strict'
}  // namespace vladdon
