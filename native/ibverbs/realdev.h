// The real-device backend: one device of a libibverbs.so.1 loaded at run time (dlopen), driven with the verbs the
// console's commands map to. No Node in here (the binding is native/addon/realdev.cpp); docs/real-devices.md.
//
// Nothing is linked against libibverbs: every exported verb is looked up with dlsym (the library's default symbol
// version, as a program linked against it would bind), and the fast paths that <infiniband/verbs.h> implements as
// static inlines (ibv_post_send, ibv_poll_cq, ibv_req_notify_cq, ibv_alloc_mw, ibv_bind_mw, ...) are called the
// way those inlines call them: through the context's ops table filled by the provider (rdma-core
// libibverbs/verbs.h). So this works with rdma-core's library and any provider, and with Verbs Lab's own
// libibverbs.so.1 (native/libibverbs), which is how `npm test` drives it end to end.
//
// Objects get handles from one counter (the device is handle 1), like the software device's session, so the host's
// command handlers address both backends the same way. What a real device does not let software see (its rings,
// its packets, its key tables) is not here: the host says "not visible on a real device" (app/host/realdev.ts).
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vl::ibverbs {

/** 0 or an errno, with a message naming the verb and what the library said. */
struct Status { int err = 0; std::string msg; };
inline Status okst() { return {}; }

/** A device as ibv_get_device_list lists it (before opening). */
struct Listed { std::string name; uint64_t guid_be = 0; };
struct Listing {
  bool library = false;       // dlopen succeeded
  bool software = false;      // the library is Verbs Lab's own (marker symbol verbslab_libibverbs)
  std::string path, error;    // the library asked for; dlerror() text or the listing failure
  std::vector<Listed> devices;
};
/** Lists the devices of `library` (a soname or a path; "" = libibverbs.so.1). */
Listing list_devices(const std::string& library);

struct GidEntry { uint32_t index; std::string gid; std::string type; };
struct DeviceInfo {
  std::string name, fw_ver, library;
  bool software = false;
  uint64_t node_guid_be = 0;
  ibv_device_attr attr{};
  ibv_port_attr port{};
  std::vector<GidEntry> gids;   // port 1's populated entries
};

struct MrInfo { uint32_t handle, pd, lkey, rkey; uint64_t addr, length; int access; };
struct MwInfo { uint32_t handle, pd, rkey; int type; uint32_t mr, qp; uint64_t addr, length; int access; bool bound; };
struct CqInfo { uint32_t handle; int cqe; bool channel; };
struct QpInit { uint32_t pd, send_cq, recv_cq, srq; int qp_type; bool sq_sig_all; ibv_qp_cap cap; };
struct QpInfo { uint32_t handle, qp_num; QpInit init; ibv_qp_attr attr; };
struct BufferInfo { uint32_t handle; uint64_t addr, length; };
/** an asynchronous event as ibv_get_async_event gave it, its object named by handle */
struct AsyncEvent { int type; uint32_t obj; const char* obj_kind; uint64_t t_ns; };

/** The QP attributes the console's forms give (rdma-core names; dgid only with the AV). */
struct QpAttrIn { ibv_qp_attr attr{}; bool has_dgid = false; uint8_t dgid[16]{}; int dest_is_self = 0; };
struct SendWrIn {
  uint64_t wr_id = 0; int opcode = 0; unsigned send_flags = 0; std::vector<ibv_sge> sg; std::vector<uint8_t> inline_data;
  uint32_t imm_or_inv = 0; bool has_imm = false; uint64_t remote_addr = 0; uint32_t rkey = 0; uint64_t compare_add = 0, swap = 0;
  uint32_t ah = 0, remote_qpn = 0, remote_qkey = 0;
  uint32_t mw = 0, bind_mr = 0, bind_rkey = 0; uint64_t bind_addr = 0, bind_length = 0; int bind_access = 0;
};
struct RecvWrIn { uint64_t wr_id = 0; std::vector<ibv_sge> sg; };

struct Lib;   // the dlsym'd entry points (realdev.cpp)

class RealDevice {
 public:
  /** dlopen `library` ("" = libibverbs.so.1), find `device` ("" = the first listed), open it, start the async-event
   *  thread. Null with the error in `st` (dlerror text, the devices the library does list, ...). */
  static std::unique_ptr<RealDevice> open(const std::string& library, const std::string& device, Status& st);
  ~RealDevice();
  RealDevice(const RealDevice&) = delete;
  RealDevice& operator=(const RealDevice&) = delete;

  /** destroys every object (QPs first, PDs last), closes the device; idempotent */
  void close();
  const DeviceInfo& info() const { return info_; }
  /** re-reads the port (state, MTU) and the GID table */
  void refresh();
  static constexpr uint32_t kDevice = 1;

  Status alloc_pd(uint32_t& out);
  Status dealloc_pd(uint32_t pd);
  Status alloc_buffer(uint64_t length, BufferInfo& out);
  Status free_buffer(uint32_t buf);
  /** only inside a buffer of this session (no other address of the host process is readable or writable) */
  Status write_memory(uint64_t addr, const uint8_t* data, size_t len);
  Status read_memory(uint64_t addr, size_t len, std::vector<uint8_t>& out);
  Status reg_mr(uint32_t pd, uint64_t addr, uint64_t length, int access, bool has_iova, uint64_t iova, MrInfo& out);
  Status rereg_mr(uint32_t mr, int flags, uint32_t pd, uint64_t addr, uint64_t length, int access, MrInfo& out);
  Status dereg_mr(uint32_t mr);
  bool mr_info(uint32_t mr, MrInfo& out);
  Status alloc_mw(uint32_t pd, int type, MwInfo& out);
  Status dealloc_mw(uint32_t mw);
  Status bind_mw(uint32_t qp, uint32_t mw, uint64_t wr_id, unsigned send_flags, uint32_t mr, uint64_t addr, uint64_t length, int access, uint32_t& rkey);
  bool mw_info(uint32_t mw, MwInfo& out);
  Status create_cq(int cqe, bool channel, CqInfo& out);
  Status destroy_cq(uint32_t cq);
  bool cq_info(uint32_t cq, CqInfo& out);
  Status req_notify_cq(uint32_t cq, bool solicited_only);
  Status poll_cq(uint32_t cq, int max, std::vector<ibv_wc>& out);
  /** non-blocking ibv_get_cq_event on the device's completion channel: EAGAIN when none is queued */
  Status get_cq_event(uint32_t& cq);
  Status ack_cq_events(uint32_t cq, unsigned n);
  Status create_srq(uint32_t pd, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit, uint32_t& out);
  Status modify_srq(uint32_t srq, uint32_t srq_limit);
  Status destroy_srq(uint32_t srq);
  Status post_srq_recv(uint32_t srq, const std::vector<RecvWrIn>& wrs, size_t& bad);
  Status create_qp(uint32_t pd, const QpInit& init, QpInfo& out);
  Status modify_qp(uint32_t qp, const QpAttrIn& in, int mask);
  Status query_qp(uint32_t qp, QpInfo& out);
  Status destroy_qp(uint32_t qp);
  Status create_ah(uint32_t pd, const uint8_t dgid[16], uint8_t sgid_index, uint32_t& out);
  Status post_send(uint32_t qp, const std::vector<SendWrIn>& wrs, size_t& bad);
  Status post_recv(uint32_t qp, const std::vector<RecvWrIn>& wrs, size_t& bad);
  /** the async events the thread collected since the last call */
  std::vector<AsyncEvent> take_async();
  /** the QP number of a QP handle, the handle of a CQ pointer: for the binding's completions */
  uint32_t qp_handle_by_num(uint32_t qpn);

 private:
  RealDevice() = default;
  void async_loop();
  uint32_t next() { return next_++; }
  template <class T> T* find(std::map<uint32_t, T>& m, uint32_t h) { auto it = m.find(h); return it == m.end() ? nullptr : &it->second; }
  Status errno_status(const char* verb, int e);
  /** [addr, addr+len) lies inside one buffer of this session */
  bool covered(uint64_t addr, uint64_t len) const;

  const Lib* lib_ = nullptr;
  DeviceInfo info_;
  ibv_context* ctx_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  uint32_t next_ = 2;
  struct Pd { ibv_pd* pd; };
  struct Mr { ibv_mr* mr; uint32_t pd; int access; };
  struct Mw { ibv_mw* mw; uint32_t pd; int type; uint32_t mr = 0, qp = 0; uint64_t addr = 0, length = 0; int access = 0; };
  struct Cq { ibv_cq* cq; int cqe; bool channel; };
  struct Srq { ibv_srq* srq; uint32_t pd; };
  struct Qp { ibv_qp* qp; QpInit init; };
  struct Ah { ibv_ah* ah; uint32_t pd; };
  struct Buf { void* p; uint64_t length; };
  std::map<uint32_t, Pd> pds_;
  std::map<uint32_t, Mr> mrs_;
  std::map<uint32_t, Mw> mws_;
  std::map<uint32_t, Cq> cqs_;
  std::map<uint32_t, Srq> srqs_;
  std::map<uint32_t, Qp> qps_;
  std::map<uint32_t, Ah> ahs_;
  std::map<uint32_t, Buf> bufs_;
  // the async thread names objects by handle: it reads the maps under this lock (every map change holds it too)
  std::mutex mu_;
  std::vector<AsyncEvent> async_;
  std::thread async_thread_;
  int stop_fd_ = -1;
  bool closed_ = false;
};

}  // namespace vl::ibverbs
