// Queues: CQs and their completion channel, SRQs, QPs, AHs, and every ring as the device holds it now.
#include <string>
#include <vector>

#include "binding.h"
#include "objects.h"

namespace vladdon {
namespace {

Napi::Value CreateCq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto dev = c.u32(info[0], "dev");
  auto cqe = c.u32(info[1], "cqe");
  auto ch = c.boolean(info[2], "with_channel");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->create_cq(dev, cqe, ch), [&](vl::Handle h) { return Napi::Number::New(env, h); });
}
Napi::Value CqInfo(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto r = s->cq_info(h);
  if (!r) return env.Null();
  auto o = Napi::Object::New(env);
  o.Set("cq", Napi::Number::New(env, r->handle));
  o.Set("device", Napi::Number::New(env, r->device));
  o.Set("cqe", Napi::Number::New(env, r->cqe));
  o.Set("channel", Napi::Boolean::New(env, r->channel));
  return o;
}
Napi::Value DestroyCq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->destroy_cq(h));
}
Napi::Value ReqNotifyCq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  auto sol = c.boolean(info[1], "solicited_only");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->req_notify_cq(h, sol));
}
Napi::Value ReqNotifyCqReportMissed(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  auto sol = c.boolean(info[1], "solicited_only");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->req_notify_cq_report_missed(h, sol), [&](int v) { return Napi::Number::New(env, v); });
}
Napi::Value GetCqEvent(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "dev");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->get_cq_event(h), [&](vl::Handle v) { return Napi::Number::New(env, v); });
}
Napi::Value AckCqEvents(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "cq");
  auto n = c.u32(info[1], "n");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->ack_cq_events(h, n));
}
Napi::Value CreateSrq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto wr = c.u32(info[1], "max_wr");
  auto sge = c.u32(info[2], "max_sge");
  auto lim = c.u32(info[3], "srq_limit", 0, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->create_srq(pd, wr, sge, lim), [&](vl::Handle v) { return Napi::Number::New(env, v); });
}
Napi::Value ModifySrq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "srq");
  auto lim = c.u32(info[1], "srq_limit");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->modify_srq(h, lim));
}
Napi::Value DestroySrq(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "srq");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->destroy_srq(h));
}
Napi::Value CreateQp(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto o = c.obj(info[1], "init_attr");
  vl::QpInitAttr a;
  if (c.ok()) {
    a.pd = pd;
    a.send_cq = c.u32(o.Get("sendCq"), "init_attr.sendCq");
    a.recv_cq = c.u32(o.Get("recvCq"), "init_attr.recvCq");
    a.srq = c.u32(o.Get("srq"), "init_attr.srq", 0, true);
    a.qp_type = c.u32(o.Get("qpType"), "init_attr.qpType", vl::QPT_RC, true);
    a.sq_sig_all = c.boolean(o.Get("sqSigAll"), "init_attr.sqSigAll");
    auto cv = o.Get("cap");
    if (!cv.IsUndefined() && !cv.IsNull()) {
      auto cap = c.obj(cv, "init_attr.cap");
      if (c.ok()) {
        a.cap.max_send_wr = c.u32(cap.Get("maxSendWr"), "init_attr.cap.maxSendWr", a.cap.max_send_wr, true);
        a.cap.max_recv_wr = c.u32(cap.Get("maxRecvWr"), "init_attr.cap.maxRecvWr", a.cap.max_recv_wr, true);
        a.cap.max_send_sge = c.u32(cap.Get("maxSendSge"), "init_attr.cap.maxSendSge", a.cap.max_send_sge, true);
        a.cap.max_recv_sge = c.u32(cap.Get("maxRecvSge"), "init_attr.cap.maxRecvSge", a.cap.max_recv_sge, true);
        a.cap.max_inline_data = c.u32(cap.Get("maxInlineData"), "init_attr.cap.maxInlineData", a.cap.max_inline_data, true);
      }
    }
  }
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->create_qp(pd, a), [&](const vl::QpInfo& q) { return QpObj(env, q); });
}
Napi::Value ModifyQp(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "qp");
  auto attr = c.qp_attr(info[1], "attr");
  auto mask = c.u32(info[2], "attr_mask");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->modify_qp(h, attr, mask));
}
Napi::Value QueryQp(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "qp");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  auto r = s->query_qp(h);
  return r ? Napi::Value(QpObj(env, *r)) : env.Null();
}
Napi::Value DestroyQp(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto h = c.u32(info[0], "qp");
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return StatusObj(env, s->destroy_qp(h));
}
Napi::Value CreateAh(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto pd = c.u32(info[0], "pd");
  auto dest = c.u32(info[1], "dest_device");
  auto sgid = c.u32(info[2], "sgid_index", 0, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  return ResultObj(env, s->create_ah(pd, dest, sgid), [&](vl::Handle v) { return Napi::Number::New(env, v); });
}
// Every queue's ring as the device holds it now: [{ owner, device, queue: "sq"|"rq"|"cq"|"srq", depth, producer,
// consumer, first, slots: [{ wrId, opcode, status, state: "posted"|"started"|"done", qpNum }] }]
Napi::Value QueueSnapshot(const Napi::CallbackInfo& info, SessionState& ss) {
  auto env = info.Env(); Conv c(env);
  auto max = c.u32(info[0], "max_slots", 256, true);
  if (c.thrown()) return env.Undefined();
  auto* s = ss.S(env); if (!s) return env.Undefined();
  static const char* qn[] = {"sq", "rq", "cq", "srq"};
  static const char* sn[] = {"posted", "started", "done"};
  const auto rings = s->queue_snapshot(max);
  auto a = Napi::Array::New(env, rings.size());
  for (size_t i = 0; i < rings.size(); i++) {
    const auto& r = rings[i];
    auto o = Napi::Object::New(env);
    o.Set("owner", Napi::Number::New(env, r.owner));
    o.Set("device", Napi::Number::New(env, r.device));
    o.Set("queue", Napi::String::New(env, qn[static_cast<uint32_t>(r.queue)]));
    o.Set("depth", Napi::Number::New(env, r.depth));
    o.Set("producer", U64(env, r.producer));
    o.Set("consumer", U64(env, r.consumer));
    o.Set("first", U64(env, r.first));
    auto sl = Napi::Array::New(env, r.slots.size());
    for (size_t k = 0; k < r.slots.size(); k++) {
      const auto& x = r.slots[k];
      auto so = Napi::Object::New(env);
      so.Set("wrId", U64(env, x.wr_id));
      so.Set("opcode", Napi::Number::New(env, x.opcode));
      so.Set("status", Napi::Number::New(env, x.status));
      so.Set("state", Napi::String::New(env, sn[static_cast<uint32_t>(x.state)]));
      if (r.queue == vl::RingQueue::Cq) so.Set("qpNum", Napi::Number::New(env, x.qp_num));
      sl.Set(static_cast<uint32_t>(k), so);
    }
    o.Set("slots", sl);
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

const SessionMethod kMethods[] = {
  {"create_cq", CreateCq},
  {"cq_info", CqInfo},
  {"destroy_cq", DestroyCq},
  {"req_notify_cq", ReqNotifyCq},
  {"req_notify_cq_report_missed", ReqNotifyCqReportMissed},
  {"get_cq_event", GetCqEvent},
  {"ack_cq_events", AckCqEvents},
  {"create_srq", CreateSrq},
  {"modify_srq", ModifySrq},
  {"destroy_srq", DestroySrq},
  {"create_qp", CreateQp},
  {"modify_qp", ModifyQp},
  {"query_qp", QueryQp},
  {"destroy_qp", DestroyQp},
  {"create_ah", CreateAh},
  {"queue_snapshot", QueueSnapshot},
};

}  // namespace
}  // namespace vladdon

VLADDON_REGISTER(vladdon::kMethods, vladdon::kNoFunctions);
