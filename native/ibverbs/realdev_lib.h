// The entry points of a dlopen'ed libibverbs.so.1 (realdev.h). Internal to native/ibverbs.
#pragma once
#include <infiniband/verbs.h>

#include <string>

namespace vl::ibverbs {

// Exported verbs of rdma-core's libibverbs (libibverbs/libibverbs.map.in), looked up at their default version.
// The optional ones (null when the library predates them) are marked.
struct Lib {
  void* handle = nullptr;
  bool software = false;   // Verbs Lab's own library (exports verbslab_libibverbs)
  ibv_device** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(ibv_device**) = nullptr;
  const char* (*get_device_name)(ibv_device*) = nullptr;
  __be64 (*get_device_guid)(ibv_device*) = nullptr;
  ibv_context* (*open_device)(ibv_device*) = nullptr;
  int (*close_device)(ibv_context*) = nullptr;
  int (*query_device)(ibv_context*, ibv_device_attr*) = nullptr;
  int (*query_port_compat)(ibv_context*, uint8_t, ibv_port_attr*) = nullptr;   // the symbol behind the ibv_query_port inline
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  int (*query_gid_ex)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t) = nullptr;   // optional (IBVERBS_1.11)
  ibv_pd* (*alloc_pd)(ibv_context*) = nullptr;
  int (*dealloc_pd)(ibv_pd*) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int) = nullptr;
  ibv_mr* (*reg_mr_iova)(ibv_pd*, void*, size_t, uint64_t, int) = nullptr;   // optional (IBVERBS_1.7)
  int (*rereg_mr)(ibv_mr*, int, ibv_pd*, void*, size_t, int) = nullptr;       // optional (IBVERBS_1.1)
  int (*dereg_mr)(ibv_mr*) = nullptr;
  ibv_comp_channel* (*create_comp_channel)(ibv_context*) = nullptr;
  int (*destroy_comp_channel)(ibv_comp_channel*) = nullptr;
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*, int) = nullptr;
  int (*destroy_cq)(ibv_cq*) = nullptr;
  int (*get_cq_event)(ibv_comp_channel*, ibv_cq**, void**) = nullptr;
  void (*ack_cq_events)(ibv_cq*, unsigned) = nullptr;
  ibv_srq* (*create_srq)(ibv_pd*, ibv_srq_init_attr*) = nullptr;
  int (*modify_srq)(ibv_srq*, ibv_srq_attr*, int) = nullptr;
  int (*destroy_srq)(ibv_srq*) = nullptr;
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;
  int (*query_qp)(ibv_qp*, ibv_qp_attr*, int, ibv_qp_init_attr*) = nullptr;
  int (*destroy_qp)(ibv_qp*) = nullptr;
  ibv_ah* (*create_ah)(ibv_pd*, ibv_ah_attr*) = nullptr;
  int (*destroy_ah)(ibv_ah*) = nullptr;
  int (*get_async_event)(ibv_context*, ibv_async_event*) = nullptr;
  void (*ack_async_event)(ibv_async_event*) = nullptr;
};

/** The library at `path` ("" = libibverbs.so.1), loaded once and kept (libibverbs keeps provider state; unloading
 *  it is not safe in every version). Null with dlerror()'s text, or the missing symbol, in `error`. */
const Lib* load_lib(const std::string& path, std::string& error);

}  // namespace vl::ibverbs
