// NVMe-oF target offload (vl/nvmf.h) and the soft NVMe function (vl/nvme.h): session.nvmf_* / session.nvme_*.
// Same conventions as the other binding files: { err, msg, value } results, TypeError naming the field for a wrong
// argument type. Field names are camelCase as in the protocol (labs/nvmf/commands.ts).
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"
#include "vl/names.h"
#include "vl/nvmf.h"

namespace vladdon {
namespace {
using vl::Handle;

Napi::Value Num(Napi::Env env, uint64_t v) { return U64(env, v); }

Napi::Object CapsObj(Napi::Env env, const vl::NvmfCaps& c) {
  auto o = Napi::Object::New(env);
  o.Set("offloadTypeRc", Num(env, c.offload_type_rc)); o.Set("offloadTypeDc", Num(env, c.offload_type_dc));
  o.Set("maxBackendCtrlsTotal", Num(env, c.max_backend_ctrls_total)); o.Set("maxSrqBackendCtrls", Num(env, c.max_srq_backend_ctrls));
  o.Set("maxSrqNamespaces", Num(env, c.max_srq_namespaces));
  o.Set("minStagingBufSize", Num(env, c.min_staging_buf_size)); o.Set("maxStagingBufSize", Num(env, c.max_staging_buf_size));
  o.Set("maxIoSz", Num(env, c.max_io_sz));
  o.Set("maxNvmeQueueDepth", Num(env, c.max_nvme_queue_depth)); o.Set("minNvmeQueueDepth", Num(env, c.min_nvme_queue_depth));
  o.Set("maxIoccsz", Num(env, c.max_ioccsz)); o.Set("minIoccsz", Num(env, c.min_ioccsz)); o.Set("maxIcdoff", Num(env, c.max_icdoff));
  o.Set("lbaDataSizes", Num(env, c.lba_data_sizes));
  o.Set("minCmdTimeoutMs", Num(env, c.min_cmd_timeout_ms)); o.Set("maxCmdTimeoutMs", Num(env, c.max_cmd_timeout_ms));
  return o;
}

vl::MrSg MrSgOf(Conv& c, const Napi::Value& v, const std::string& w) {
  vl::MrSg m;
  auto o = c.obj(v, w);
  if (!c.ok()) return m;
  m.mr = c.u32(o.Get("mr"), w + ".mr"); m.addr = c.u64(o.Get("addr"), w + ".addr"); m.len = c.u64(o.Get("len"), w + ".len");
  return m;
}

Napi::Value QueryCaps(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::query_caps(*s, dev), [&](const vl::NvmfCaps& v) { return CapsObj(env, v); });
}

// nvmf_create_srq(pd, maxWr, maxSge, { offloadOps, maxNamespaces, nvmeLogPageSz, ioccsz, icdoff, maxIoSz,
//                                      nvmeQueueDepth, stagingBuf: { mr, addr, len }, cq })
Napi::Value CreateSrq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto wr = c.u32(info[1], "max_wr");
  auto sge = c.u32(info[2], "max_sge");
  auto o = c.obj(info[3], "nvmf_attr");
  vl::NvmfSrqAttr a;
  if (c.ok()) {
    a.offload_ops = c.u32(o.Get("offloadOps"), "nvmf_attr.offloadOps", a.offload_ops, true);
    a.max_namespaces = c.u32(o.Get("maxNamespaces"), "nvmf_attr.maxNamespaces", a.max_namespaces, true);
    a.nvme_log_page_sz = c.u32(o.Get("nvmeLogPageSz"), "nvmf_attr.nvmeLogPageSz", a.nvme_log_page_sz, true);
    a.ioccsz = c.u32(o.Get("ioccsz"), "nvmf_attr.ioccsz", a.ioccsz, true);
    a.icdoff = c.u32(o.Get("icdoff"), "nvmf_attr.icdoff", a.icdoff, true);
    a.max_io_sz = c.u32(o.Get("maxIoSz"), "nvmf_attr.maxIoSz", a.max_io_sz, true);
    a.nvme_queue_depth = c.u32(o.Get("nvmeQueueDepth"), "nvmf_attr.nvmeQueueDepth", a.nvme_queue_depth, true);
    a.staging_buf = MrSgOf(c, o.Get("stagingBuf"), "nvmf_attr.stagingBuf");
    a.cq = c.u32(o.Get("cq"), "nvmf_attr.cq");
  }
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::create_srq(*s, pd, wr, sge, a), [&](Handle h) { return Napi::Number::New(env, h); });
}

// nvme_create({ dstrd?, mqes?, maxIoQueues?, oncs?, mdts? })
Napi::Value NvmeCreate(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  vl::nvme::Config cfg;
  if (!info[0].IsUndefined()) {
    auto o = c.obj(info[0], "config");
    if (c.ok()) {
      cfg.dstrd = c.u32(o.Get("dstrd"), "config.dstrd", cfg.dstrd, true);
      cfg.mqes = c.u32(o.Get("mqes"), "config.mqes", cfg.mqes, true);
      cfg.max_io_queues = c.u32(o.Get("maxIoQueues"), "config.maxIoQueues", cfg.max_io_queues, true);
      cfg.oncs = uint16_t(c.u32(o.Get("oncs"), "config.oncs", cfg.oncs, true));
      cfg.mdts = uint8_t(c.u32(o.Get("mdts"), "config.mdts", cfg.mdts, true));
    }
  }
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::nvme_create(*s, cfg), [&](Handle h) { return Napi::Number::New(env, h); });
}

Napi::Value NvmeAddNamespace(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  auto o = c.obj(info[1], "namespace");
  vl::nvme::NamespaceConfig n;
  if (c.ok()) {
    n.nsid = c.u32(o.Get("nsid"), "namespace.nsid");
    n.lba_data = c.u32(o.Get("lbaData"), "namespace.lbaData", 512, true);
    n.lba_meta = c.u32(o.Get("lbaMeta"), "namespace.lbaMeta", 0, true);
    n.nlba = c.u64(o.Get("nlba"), "namespace.nlba");
  }
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::nvme_add_namespace(*s, h, n));
}

Napi::Value NvmeP2pQueue(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  auto pd = c.u32(info[1], "pd");
  auto depth = c.u32(info[2], "depth");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::nvme_p2p_queue(*s, h, pd, depth), [&](const vl::NvmeP2pQueue& q) {
    auto o = Napi::Object::New(env);
    o.Set("qid", Num(env, q.qid)); o.Set("depth", Num(env, q.depth));
    o.Set("sqBuffer", Num(env, q.sq_buffer)); o.Set("cqBuffer", Num(env, q.cq_buffer));
    o.Set("sqMr", Num(env, q.sq_mr)); o.Set("cqMr", Num(env, q.cq_mr));
    o.Set("sqAddr", Num(env, q.sq_addr)); o.Set("cqAddr", Num(env, q.cq_addr));
    o.Set("sqdb", Num(env, q.sqdb)); o.Set("cqdb", Num(env, q.cqdb));
    return o;
  });
}

Napi::Value NvmePeek(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  auto nsid = c.u32(info[1], "nsid");
  auto slba = c.u64(info[2], "slba");
  auto n = c.u32(info[3], "nlb");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  if (n > 65536) return StatusObj(env, {EINVAL, "nlb: at most 65536 blocks per peek"});
  std::vector<uint8_t> out;
  vl::Status st = vl::nvmf::nvme_peek(*s, h, nsid, slba, n, out);
  auto o = StatusObj(env, st);
  if (st.ok()) o.Set("value", Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size()));
  return o;
}

Napi::Value NvmeInjectTimeout(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  auto n = c.u32(info[1], "n", 1, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::nvme_inject_timeout(*s, h, n));
}

Napi::Value NvmePciError(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::nvme_pci_error(*s, h));
}

Napi::Value NvmeSetNamespaceReady(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  auto nsid = c.u32(info[1], "nsid");
  auto ready = c.boolean(info[2], "ready", true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::nvme_set_namespace_ready(*s, h, nsid, ready));
}

Napi::Object QueueObj(Napi::Env env, const vl::nvme::QueueState& q) {
  auto o = Napi::Object::New(env);
  o.Set("qid", Num(env, q.qid)); o.Set("kind", Napi::String::New(env, q.cq ? "cq" : "sq"));
  o.Set("base", Num(env, q.base)); o.Set("size", Num(env, q.size));
  o.Set("head", Num(env, q.head)); o.Set("tail", Num(env, q.tail));
  o.Set("phase", Napi::Boolean::New(env, q.phase)); o.Set("cqid", Num(env, q.cqid));
  o.Set("fetched", Num(env, q.fetched)); o.Set("completed", Num(env, q.completed));
  return o;
}

Napi::Value NvmeSnapshot(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "nvme");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::nvme_snapshot(*s, h), [&](const vl::NvmeSnapshot& n) {
    auto o = Napi::Object::New(env);
    o.Set("nvme", Num(env, n.h)); o.Set("bar0", Num(env, n.bar0)); o.Set("barSize", Num(env, n.bar_size));
    o.Set("cc", Num(env, n.cc)); o.Set("csts", Num(env, n.csts)); o.Set("dstrd", Num(env, n.dstrd));
    auto qs = Napi::Array::New(env, n.queues.size());
    for (size_t i = 0; i < n.queues.size(); i++) qs.Set(uint32_t(i), QueueObj(env, n.queues[i]));
    o.Set("queues", qs);
    auto ns = Napi::Array::New(env, n.namespaces.size());
    for (size_t i = 0; i < n.namespaces.size(); i++) {
      auto x = Napi::Object::New(env);
      x.Set("nsid", Num(env, n.namespaces[i].nsid)); x.Set("lbaData", Num(env, n.namespaces[i].lba_data));
      x.Set("lbaMeta", Num(env, n.namespaces[i].lba_meta)); x.Set("nlba", Num(env, n.namespaces[i].nlba));
      ns.Set(uint32_t(i), x);
    }
    o.Set("namespaces", ns);
    auto k = Napi::Object::New(env);
    k.Set("reads", Num(env, n.counters.reads)); k.Set("writes", Num(env, n.counters.writes));
    k.Set("flushes", Num(env, n.counters.flushes)); k.Set("writeZeroes", Num(env, n.counters.write_zeroes));
    k.Set("dsm", Num(env, n.counters.dsm)); k.Set("admin", Num(env, n.counters.admin));
    k.Set("errors", Num(env, n.counters.errors)); k.Set("lost", Num(env, n.counters.lost));
    o.Set("counters", k);
    return o;
  });
}

// nvmf_create_ctrl(srq, { sqBuf: {mr, addr, len}, cqBuf, sqdb, cqdb, sqdbIni?, cqdbIni?, cmdTimeoutMs? })
Napi::Value CreateCtrl(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto srq = c.u32(info[0], "srq");
  auto o = c.obj(info[1], "attr");
  vl::NvmeCtrlAttr a;
  if (c.ok()) {
    a.sq_buf = MrSgOf(c, o.Get("sqBuf"), "attr.sqBuf");
    a.cq_buf = MrSgOf(c, o.Get("cqBuf"), "attr.cqBuf");
    a.sqdb = c.u64(o.Get("sqdb"), "attr.sqdb");
    a.cqdb = c.u64(o.Get("cqdb"), "attr.cqdb");
    a.sqdb_ini = uint16_t(c.u32(o.Get("sqdbIni"), "attr.sqdbIni", 0, true));
    a.cqdb_ini = uint16_t(c.u32(o.Get("cqdbIni"), "attr.cqdbIni", 0, true));
    a.cmd_timeout_ms = c.u32(o.Get("cmdTimeoutMs"), "attr.cmdTimeoutMs", a.cmd_timeout_ms, true);
  }
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::srq_create_nvme_ctrl(*s, srq, a), [&](Handle h) { return Napi::Number::New(env, h); });
}

Napi::Value RemoveCtrl(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "ctrl");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::srq_remove_nvme_ctrl(*s, h));
}

Napi::Value MapNsid(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "ctrl");
  auto fe = c.u32(info[1], "fe_nsid");
  auto lba = c.u32(info[2], "lba_data_size");
  auto nsid = c.u32(info[3], "nvme_nsid");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::map_nvmf_nsid(*s, h, fe, lba, nsid));
}

Napi::Value UnmapNsid(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "ctrl");
  auto fe = c.u32(info[1], "fe_nsid");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::unmap_nvmf_nsid(*s, h, fe));
}

Napi::Value QpSetNvmf(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto qp = c.u32(info[0], "qp");
  auto flags = c.u32(info[1], "flags", vl::QP_NVMF_ATTR_FLAG_ENABLE, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, vl::nvmf::qp_set_nvmf(*s, qp, flags));
}

Napi::Value Snapshot(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto srq = c.u32(info[0], "srq");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, vl::nvmf::snapshot(*s, srq), [&](const vl::NvmfSnapshot& n) {
    auto o = Napi::Object::New(env);
    o.Set("srq", Num(env, n.srq)); o.Set("device", Num(env, n.device));
    o.Set("offloadOps", Num(env, n.attr.offload_ops)); o.Set("maxIoSz", Num(env, n.attr.max_io_sz));
    o.Set("ioccsz", Num(env, n.attr.ioccsz)); o.Set("icdoff", Num(env, n.attr.icdoff));
    o.Set("maxNamespaces", Num(env, n.attr.max_namespaces));
    auto st = Napi::Object::New(env);
    st.Set("mr", Num(env, n.attr.staging_buf.mr)); st.Set("addr", Num(env, n.attr.staging_buf.addr));
    st.Set("len", Num(env, n.attr.staging_buf.len)); st.Set("pageSize", Num(env, n.staging_page_size));
    auto pages = Napi::Array::New(env, n.staging_pages.size());
    for (size_t i = 0; i < n.staging_pages.size(); i++) pages.Set(uint32_t(i), Num(env, n.staging_pages[i]));
    st.Set("pages", pages);
    o.Set("staging", st);
    auto cs = Napi::Array::New(env, n.ctrls.size());
    for (size_t i = 0; i < n.ctrls.size(); i++) {
      const auto& x = n.ctrls[i];
      auto k = Napi::Object::New(env);
      k.Set("ctrl", Num(env, x.h)); k.Set("nvme", Num(env, x.nvme)); k.Set("alive", Napi::Boolean::New(env, x.alive));
      k.Set("sqAddr", Num(env, x.sq_addr)); k.Set("cqAddr", Num(env, x.cq_addr)); k.Set("sqdb", Num(env, x.sqdb));
      k.Set("cqdb", Num(env, x.cqdb)); k.Set("depth", Num(env, x.depth)); k.Set("sqTail", Num(env, x.sq_tail));
      k.Set("cqHead", Num(env, x.cq_head)); k.Set("phase", Napi::Boolean::New(env, x.phase));
      k.Set("inflight", Num(env, x.inflight)); k.Set("cmdTimeoutMs", Num(env, x.cmd_timeout_ms));
      cs.Set(uint32_t(i), k);
    }
    o.Set("ctrls", cs);
    auto ns = Napi::Array::New(env, n.namespaces.size());
    for (size_t i = 0; i < n.namespaces.size(); i++) {
      const auto& x = n.namespaces[i];
      auto k = Napi::Object::New(env);
      k.Set("feNsid", Num(env, x.fe_nsid)); k.Set("ctrl", Num(env, x.ctrl)); k.Set("nsid", Num(env, x.nsid));
      k.Set("lbaDataSize", Num(env, x.lba_data_size));
      auto t = Napi::Object::New(env);
      t.Set("readCmds", Num(env, x.counters.read_cmds)); t.Set("readBlocks", Num(env, x.counters.read_blocks));
      t.Set("writeCmds", Num(env, x.counters.write_cmds)); t.Set("writeBlocks", Num(env, x.counters.write_blocks));
      t.Set("writeInlineCmds", Num(env, x.counters.write_inline_cmds)); t.Set("flushCmds", Num(env, x.counters.flush_cmds));
      t.Set("errorCmds", Num(env, x.counters.error_cmds)); t.Set("backendErrorCmds", Num(env, x.counters.backend_error_cmds));
      k.Set("counters", t);
      ns.Set(uint32_t(i), k);
    }
    o.Set("namespaces", ns);
    auto in = Napi::Array::New(env, n.inflight.size());
    for (size_t i = 0; i < n.inflight.size(); i++) {
      const auto& x = n.inflight[i];
      auto k = Napi::Object::New(env);
      k.Set("id", Num(env, x.id)); k.Set("qp", Num(env, x.qp)); k.Set("cid", Num(env, x.cid)); k.Set("beCid", Num(env, x.be_cid));
      k.Set("opcode", Num(env, x.opcode)); k.Set("feNsid", Num(env, x.fe_nsid));
      const char* step = vl::name_of(vl::kNvmfStepNames, uint32_t(x.step));
      k.Set("step", Napi::String::New(env, step ? step : "?"));
      in.Set(uint32_t(i), k);
    }
    o.Set("inflight", in);
    auto qs = Napi::Array::New(env, n.enabled_qps.size());
    for (size_t i = 0; i < n.enabled_qps.size(); i++) qs.Set(uint32_t(i), Num(env, n.enabled_qps[i]));
    o.Set("enabledQps", qs);
    auto k = Napi::Object::New(env);
    k.Set("offloaded", Num(env, n.counters.offloaded)); k.Set("toSoftware", Num(env, n.counters.to_software));
    k.Set("unknownNamespace", Num(env, n.counters.unknown_namespace)); k.Set("errors", Num(env, n.counters.errors));
    k.Set("servedBeforeConnect", Num(env, n.counters.served_before_connect)); k.Set("stagingWaits", Num(env, n.counters.staging_waits));
    o.Set("counters", k);
    return o;
  });
}

const SessionMethod kMethods[] = {
  {"nvmf_query_caps", QueryCaps},
  {"nvmf_create_srq", CreateSrq},
  {"nvmf_create_ctrl", CreateCtrl},
  {"nvmf_remove_ctrl", RemoveCtrl},
  {"nvmf_map_nsid", MapNsid},
  {"nvmf_unmap_nsid", UnmapNsid},
  {"nvmf_qp_set", QpSetNvmf},
  {"nvmf_snapshot", Snapshot},
  {"nvme_create", NvmeCreate},
  {"nvme_add_namespace", NvmeAddNamespace},
  {"nvme_p2p_queue", NvmeP2pQueue},
  {"nvme_peek", NvmePeek},
  {"nvme_inject_timeout", NvmeInjectTimeout},
  {"nvme_pci_error", NvmePciError},
  {"nvme_set_namespace_ready", NvmeSetNamespaceReady},
  {"nvme_snapshot", NvmeSnapshot},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
