// The real-device backend's part of the binding (realdev.cpp): exports RealDevice and realdevList.
#pragma once
#include <napi.h>

namespace vladdon {
void RealdevInit(Napi::Env env, Napi::Object exports);
}  // namespace vladdon
