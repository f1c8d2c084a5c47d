// Device list, open / close, device / port / GID / P_Key queries: answered from the device's profile and its network
// attachment (no sysfs, no netlink). rdma-core references: libibverbs/device.c, verbs.c, cmd_device.c.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "lib.h"

using namespace vlib;

namespace {

vl::DeviceInfo info() {
  for (auto& d : g().s->devices()) if (d.handle == g().dev) return d;
  return {};
}

bool is_our_device(ibv_device* d) { return d == &g().device.dev; }

int port_ok(uint8_t port) { return port == 1 ? 0 : EINVAL; }   // one port, as rxe

void fill_device_attr(ibv_device_attr& a) {
  vl::DeviceInfo d = info();
  const vl::Profile& p = d.profile;
  std::memset(&a, 0, sizeof a);
  snprintf(a.fw_ver, sizeof a.fw_ver, "verbslab %s", p.name.c_str());
  a.node_guid = htobe64(d.node_guid);
  a.sys_image_guid = a.node_guid;
  a.max_mr_size = p.max_mr_size;
  a.page_size_cap = p.page_size_cap;
  a.vendor_id = 0xFFFFFF;                      // rxe_param.h RXE_VENDOR_ID (a software device has no IEEE OUI)
  a.vendor_part_id = 0;
  a.hw_ver = 0;
  a.max_qp = p.max_qp;
  a.max_qp_wr = p.max_qp_wr;
  a.device_cap_flags = static_cast<unsigned>(p.device_cap_flags);
  a.max_sge = p.max_sge;
  a.max_sge_rd = p.max_sge;
  a.max_cq = p.max_cq;
  a.max_cqe = p.max_cqe;
  a.max_mr = p.max_mr;
  a.max_pd = p.max_pd;
  a.max_qp_rd_atom = p.max_qp_rd_atom;
  a.max_res_rd_atom = p.max_qp_rd_atom * p.max_qp;
  a.max_qp_init_rd_atom = p.max_qp_init_rd_atom;
  a.atomic_cap = static_cast<ibv_atomic_cap>(p.atomic_cap);
  a.max_mw = p.max_mw;
  a.max_ah = p.max_qp;
  a.max_srq = p.max_srq;
  a.max_srq_wr = p.max_srq_wr;
  a.max_srq_sge = p.max_srq_sge;
  a.max_pkeys = 1;                             // the default P_Key 0xffff only
  a.local_ca_ack_delay = 15;                   // rxe_param.h RXE_LOCAL_CA_ACK_DELAY
  a.phys_port_cnt = 1;
}

void fill_port_attr(ibv_port_attr& a) {
  vl::DeviceInfo d = info();
  std::memset(&a, 0, sizeof a);
  a.state = static_cast<ibv_port_state>(d.port_state);
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = static_cast<ibv_mtu>(d.profile.active_mtu);
  a.gid_tbl_len = static_cast<int>(d.gids.size());
  a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;   // rxe_param.h RXE_PORT_PORT_CAP_FLAGS
  a.max_msg_sz = 0x80000000;                   // rxe_param.h RXE_PORT_MAX_MSG_SZ
  a.pkey_tbl_len = 1;
  a.max_vl_num = 1;
  a.active_width = 2;                          // 4X
  a.active_speed = 1;                          // SDR (ib_get_eth_speed for an unknown link speed)
  a.phys_state = 5;                            // LinkUp (IB_PORT_PHYS_STATE_LINK_UP)
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
}

}  // namespace

VL_EXPORT int ibv_fork_init(void) { return 0; }
// The device reads and writes the program's pages from inside the process (no DMA to pinned pages), so a fork's
// copy-on-write cannot make it write into pages the parent no longer sees.
VL_EXPORT ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }

#undef ibv_get_device_list
VL_EXPORT ibv_device** ibv_get_device_list(int* num) {
  if (!init_session()) {
    if (num) *num = 0;
    if (std::getenv("VERBSLAB_DEBUG")) fprintf(stderr, "verbslab libibverbs: %s\n", g().error.c_str());
    errno = ENOSYS;
    return nullptr;
  }
  auto** list = static_cast<ibv_device**>(calloc(2, sizeof(ibv_device*)));
  if (!list) { errno = ENOMEM; return nullptr; }
  list[0] = &g().device.dev;
  if (num) *num = 1;
  return list;
}

VL_EXPORT void ibv_free_device_list(ibv_device** list) { free(list); }
VL_EXPORT const char* ibv_get_device_name(ibv_device* d) { return d ? d->name : nullptr; }
VL_EXPORT int ibv_get_device_index(ibv_device* d) { return is_our_device(d) ? 0 : -1; }
VL_EXPORT __be64 ibv_get_device_guid(ibv_device* d) {
  if (!is_our_device(d)) return 0;
  return htobe64(info().node_guid);
}

VL_EXPORT ibv_context* ibv_open_device(ibv_device* d) {
  if (!is_our_device(d)) { errno = ENODEV; return nullptr; }
  if (int e = attach_network()) {
    fprintf(stderr, "verbslab libibverbs: %s\n", g().error.c_str());
    errno = e;
    return nullptr;
  }
  auto* c = new (std::nothrow) Context{};
  if (!c) { errno = ENOMEM; return nullptr; }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) { delete c; return nullptr; }
  c->async_wfd = fds[1];
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  verbs_context& v = c->vctx;
  ibv_context& ctx = v.context;
  ctx.device = d;
  ctx.cmd_fd = -1;                             // no kernel behind this context
  ctx.async_fd = fds[0];
  ctx.num_comp_vectors = 1;
  pthread_mutex_init(&ctx.mutex, nullptr);
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  v.sz = sizeof(verbs_context);
  fill_ops(*c);
  return &ctx;
}

VL_EXPORT int ibv_close_device(ibv_context* ctx) {
  Context* c = ctx_of(ctx);
  auto lk = lock();                            // no asynchronous event is being written to it meanwhile
  close(ctx->async_fd);
  close(c->async_wfd);
  ctx->async_fd = c->async_wfd = -1;
  // The memory stays: objects the program did not destroy still name this context (the device keeps them until
  // exit, as the kernel would until the file is closed), and an event for one of them must not touch freed memory.
  return 0;
}

VL_EXPORT int ibv_query_device(ibv_context* ctx, ibv_device_attr* a) {
  if (!ctx || !a) return EINVAL;
  auto lk = lock();
  fill_device_attr(*a);
  return 0;
}

int vlib::op_query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* in, ibv_device_attr_ex* a, size_t len) {
  if (in && in->comp_mask) return EINVAL;
  if (len < sizeof(ibv_device_attr)) return EINVAL;
  ibv_device_attr_ex ex;
  std::memset(&ex, 0, sizeof ex);
  {
    auto lk = lock();
    fill_device_attr(ex.orig_attr);
  }
  ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags;   // the low 32 bits are ibv_device_cap_flags
  ex.phys_port_cnt_ex = 1;
  std::memset(a, 0, len);
  std::memcpy(a, &ex, std::min(len, sizeof ex));
  return 0;
}

int vlib::op_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* a, size_t len) {
  if (int e = port_ok(port)) return e;
  ibv_port_attr pa;
  {
    auto lk = lock();
    fill_port_attr(pa);
  }
  std::memset(a, 0, len);
  std::memcpy(a, &pa, std::min(len, sizeof pa));
  return 0;
}

// The exported symbol (binaries built before the verbs_context query_port op): the compat struct ends with link_layer.
#undef ibv_query_port
VL_EXPORT int ibv_query_port(ibv_context* ctx, uint8_t port, _compat_ibv_port_attr* a) {
  return op_query_port(ctx, port, reinterpret_cast<ibv_port_attr*>(a), offsetof(ibv_port_attr, flags));
}

VL_EXPORT int ibv_query_gid(ibv_context* ctx, uint8_t port, int index, ibv_gid* gid) {
  if (port_ok(port) || !gid) { errno = EINVAL; return -1; }
  auto lk = lock();
  vl::DeviceInfo d = info();
  if (index < 0 || size_t(index) >= d.gids.size()) { errno = EINVAL; return -1; }
  std::memcpy(gid->raw, d.gids[index].gid, 16);
  return 0;
}

static int gid_entry(uint32_t port, uint32_t index, ibv_gid_entry& e) {
  if (port != 1) return EINVAL;
  vl::DeviceInfo d = info();
  if (index >= d.gids.size()) return EINVAL;
  static const uint8_t zero[16] = {};
  if (!std::memcmp(d.gids[index].gid, zero, 16)) return ENODATA;
  std::memset(&e, 0, sizeof e);
  std::memcpy(e.gid.raw, d.gids[index].gid, 16);
  e.gid_index = index;
  e.port_num = port;
  e.gid_type = IBV_GID_TYPE_ROCE_V2;           // every GID of a RoCEv2 software device
  e.ndev_ifindex = 0;
  return 0;
}

VL_EXPORT int _ibv_query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags,
                                size_t entry_size) {
  if (!ctx || !entry || flags || entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  auto lk = lock();
  ibv_gid_entry e;
  if (int r = gid_entry(port, index, e)) return r;
  std::memcpy(entry, &e, sizeof e);
  return 0;
}

VL_EXPORT ssize_t _ibv_query_gid_table(ibv_context* ctx, ibv_gid_entry* entries, size_t max, uint32_t flags,
                                       size_t entry_size) {
  if (!ctx || flags || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  auto lk = lock();
  size_t n = 0;
  size_t total = info().gids.size();
  for (uint32_t i = 0; i < total; i++) {
    ibv_gid_entry e;
    if (gid_entry(1, i, e)) continue;
    if (n >= max) return -EINVAL;              // the buffer is too small for the valid entries
    std::memcpy(reinterpret_cast<uint8_t*>(entries) + n * entry_size, &e, sizeof e);
    n++;
  }
  return static_cast<ssize_t>(n);
}

// rdma-core driver.h (IBVERBS_PRIVATE): enum ibv_gid_type_sysfs { IB_ROCE_V1 = 0, ROCE_V2 = 1 }.
VL_EXPORT int ibv_query_gid_type(ibv_context* ctx, uint8_t port, unsigned int index, int* type) {
  auto lk = lock();
  ibv_gid_entry e;
  if (int r = gid_entry(port, index, e)) { errno = r; return -1; }
  *type = 1;
  return 0;
}

VL_EXPORT int ibv_query_pkey(ibv_context* ctx, uint8_t port, int index, __be16* pkey) {
  if (port_ok(port) || index != 0 || !pkey) { errno = EINVAL; return -1; }
  *pkey = htobe16(0xFFFF);                     // the default partition, the only one
  return 0;
}

VL_EXPORT int ibv_get_pkey_index(ibv_context* ctx, uint8_t port, __be16 pkey) {
  if (port_ok(port)) { errno = EINVAL; return -1; }
  if (be16toh(pkey) == 0xFFFF) return 0;
  errno = ENOENT;
  return -1;
}

// No sysfs behind this device: every file is absent.
VL_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  errno = ENOENT;
  return -1;
}
VL_EXPORT int ibv_read_ibdev_sysfs_file(char* buf, size_t size, void* sysfs_dev, const char* fnfmt, ...) {
  errno = ENOENT;
  return -1;
}
VL_EXPORT int ibv_get_sysfs_path(char* buf, size_t size) {
  snprintf(buf, size, "/sys");
  return 0;
}

// Marker for Verbs Lab's own real-device enumeration (native/ibverbs/enumerate.h): this libibverbs.so.1 is the
// software device, not a real one.
VL_EXPORT const char verbslab_libibverbs[] = "Verbs Lab software device";
