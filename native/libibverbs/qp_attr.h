// vl::QpAttr -> struct ibv_qp_attr, every field from the device's answer as ibv_copy_qp_attr_from_kern
// (rdma-core libibverbs/cmd_cq.c / kern-abi) fills it from the kernel's, the address vector as RoCE names the peer: by
// its GID. Read by ibv_query_qp (objects.cpp) and librdmacm's rdma_init_qp_attr (native/librdmacm/id.cpp).
#pragma once
#include <infiniband/verbs.h>

#include <cstring>

#include "vl/session.h"

namespace vlib {

inline void to_ibv_qp_attr(const vl::QpAttr& v, ibv_qp_attr& a) {
  std::memset(&a, 0, sizeof a);
  a.qp_state = static_cast<ibv_qp_state>(v.qp_state);
  a.cur_qp_state = static_cast<ibv_qp_state>(v.cur_qp_state);
  a.path_mtu = static_cast<ibv_mtu>(v.path_mtu);
  a.qp_access_flags = v.qp_access_flags;
  a.qkey = v.qkey;
  a.rq_psn = v.rq_psn;
  a.sq_psn = v.sq_psn;
  a.dest_qp_num = v.dest_qp_num;
  a.pkey_index = static_cast<uint16_t>(v.pkey_index);
  a.port_num = static_cast<uint8_t>(v.port_num);
  a.max_rd_atomic = static_cast<uint8_t>(v.max_rd_atomic);
  a.max_dest_rd_atomic = static_cast<uint8_t>(v.max_dest_rd_atomic);
  a.min_rnr_timer = static_cast<uint8_t>(v.min_rnr_timer);
  a.timeout = static_cast<uint8_t>(v.timeout);
  a.retry_cnt = static_cast<uint8_t>(v.retry_cnt);
  a.rnr_retry = static_cast<uint8_t>(v.rnr_retry);
  a.ah_attr.is_global = 1;                     // RoCE: the peer is named by its GID
  std::memcpy(a.ah_attr.grh.dgid.raw, v.dgid, 16);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(v.sgid_index);
}

}  // namespace vlib
