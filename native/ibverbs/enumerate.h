// Real-device discovery through rdma-core's libibverbs, loaded at run time (dlopen), so Verbs Lab builds and
// runs where libibverbs is absent. Only opaque-pointer entry points are used (no <infiniband/verbs.h>
// needed at build time). Driving real devices (the full backend) is not built yet.
#pragma once
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vl::ibverbs {

struct RealDevice { std::string name; uint64_t guid_be = 0; };
struct Enumeration { bool library = false; std::string error; std::vector<RealDevice> devices; };

inline Enumeration enumerate() {
  Enumeration out;
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) { const char* e = dlerror(); out.error = e ? e : "libibverbs.so.1 not found"; return out; }
  out.library = true;
  // Verbs Lab's own libibverbs.so.1 (native/libibverbs, first in LD_LIBRARY_PATH under `verbslab exec`) exports this
  // marker: its device is the software device, not a real one.
  if (dlsym(lib, "verbslab_libibverbs")) {
    out.error = "libibverbs.so.1 is Verbs Lab's software-device library (verbslab exec), not rdma-core's";
    return out;
  }
  using GetList = void** (*)(int*);
  using FreeList = void (*)(void**);
  using GetName = const char* (*)(void*);
  using GetGuid = uint64_t (*)(void*);
  auto get_list = reinterpret_cast<GetList>(dlsym(lib, "ibv_get_device_list"));
  auto free_list = reinterpret_cast<FreeList>(dlsym(lib, "ibv_free_device_list"));
  auto get_name = reinterpret_cast<GetName>(dlsym(lib, "ibv_get_device_name"));
  auto get_guid = reinterpret_cast<GetGuid>(dlsym(lib, "ibv_get_device_guid"));
  if (!get_list || !free_list || !get_name || !get_guid) {
    out.error = "libibverbs.so.1 lacks ibv_get_device_list/ibv_get_device_name/ibv_get_device_guid";
  } else {
    int n = 0;
    void** list = get_list(&n);
    if (!list) out.error = "ibv_get_device_list failed (no RDMA subsystem?)";
    for (int i = 0; list && i < n; ++i) {
      const char* name = get_name(list[i]);
      out.devices.push_back({name ? name : "?", get_guid(list[i])});
    }
    if (list) free_list(list);
  }
  // libibverbs keeps provider state; unloading it is not safe in every version, so it stays loaded.
  return out;
}

}  // namespace vl::ibverbs
