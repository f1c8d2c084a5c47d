// The typed facts of the event stream (Event::change, Event::key_state; native/EVENTS.md): every MR / MW life-cycle
// step says what changed and the key's state after it, so that no reader has to parse the text.
#include "core_fixture.h"
#include "vl/names.h"

using namespace vlt;

namespace {
uint32_t inc(uint32_t k) { return (k & ~0xffu) | ((k + 1) & 0xff); }

// the last event of `kind` about object `obj` drained since the previous call
Event last(Session& s, EventKind kind, Handle obj) {
  Event found;
  found.kind = EventKind::Log;
  for (auto& e : s.drain_events())
    if (e.kind == kind && e.obj == obj) found = e;
  EXPECT_EQ(found.kind, kind) << "no " << name_of(kEventKindNames, uint32_t(kind)) << " event for object " << obj;
  return found;
}
uint8_t u8(Change c) { return static_cast<uint8_t>(c); }
uint8_t u8(KeyState k) { return static_cast<uint8_t>(k); }
}  // namespace

TEST(EventsTyped, MrLifeCycle) {
  Pair p;
  p.s.drain_events();
  // user MR: created VALID; re-registration: a new key, VALID
  auto m = p.s.reg_mr(p.b.pd, p.b.buf.addr, 256, ACCESS_LOCAL_WRITE).value;
  auto e = last(p.s, EventKind::ObjectCreated, m.handle);
  EXPECT_EQ(e.key_state, u8(KeyState::Valid));
  EXPECT_EQ(e.change, Event::kNone);
  auto r = p.s.rereg_mr(m.handle, 4 /* IBV_REREG_MR_CHANGE_ACCESS */, 0, 0, 0, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
  ASSERT_TRUE(r.ok()) << r.msg;
  e = last(p.s, EventKind::ObjectModified, m.handle);
  EXPECT_EQ(e.change, u8(Change::Rereg));
  EXPECT_EQ(e.key_state, u8(KeyState::Valid));
  EXPECT_EQ(e.a, r.value.lkey);
  EXPECT_EQ(e.b, r.value.rkey);
  ASSERT_TRUE(p.s.dereg_mr(m.handle).ok());
  EXPECT_EQ(last(p.s, EventKind::ObjectDestroyed, m.handle).key_state, u8(KeyState::Invalid));

  // fast-registration MR: created FREE; map_mr_sg keeps it FREE; IB_WR_REG_MR -> VALID; LOCAL_INV -> FREE
  auto f = p.s.alloc_mr(p.b.pd, 4).value;
  EXPECT_EQ(last(p.s, EventKind::ObjectCreated, f.handle).key_state, u8(KeyState::Free));
  ASSERT_EQ(p.s.map_mr_sg(f.handle, {{p.b.buf.addr, 4096, 0}}).value, 1u);
  e = last(p.s, EventKind::ObjectModified, f.handle);
  EXPECT_EQ(e.change, u8(Change::MapMrSg));
  EXPECT_EQ(e.key_state, u8(KeyState::Free));
  const uint32_t key = inc(f.rkey);
  SendWr reg; reg.wr_id = 5; reg.opcode = WR_REG_MR; reg.send_flags = SEND_SIGNALED; reg.reg_mr = f.handle; reg.reg_key = key;
  reg.reg_access = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE;
  ASSERT_EQ(p.send_one(p.b, reg).status, WC_SUCCESS);
  e = last(p.s, EventKind::ObjectModified, f.handle);
  EXPECT_EQ(e.change, u8(Change::RegMrWr));
  EXPECT_EQ(e.key_state, u8(KeyState::Valid));
  EXPECT_EQ(e.a, key);
  SendWr inv; inv.wr_id = 6; inv.opcode = WR_LOCAL_INV; inv.send_flags = SEND_SIGNALED; inv.imm_data = key;
  ASSERT_EQ(p.send_one(p.b, inv).status, WC_SUCCESS);
  e = last(p.s, EventKind::ObjectModified, f.handle);
  EXPECT_EQ(e.change, u8(Change::LocalInv));
  EXPECT_EQ(e.key_state, u8(KeyState::Free));
  EXPECT_EQ(e.a, key);
}

TEST(EventsTyped, MwLifeCycle) {
  Pair p("rxe", QPT_RC, 1, 65536, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND);
  p.s.drain_events();
  // type 1 windows are created VALID (zero length), type 2 FREE (rxe_alloc_mw)
  auto w1 = p.s.alloc_mw(p.b.pd, MW_TYPE_1).value;
  EXPECT_EQ(last(p.s, EventKind::ObjectCreated, w1.handle).key_state, u8(KeyState::Valid));
  // type 1 through the bind verb: bound, then unbound with length 0 (each gives a new rkey; the window stays VALID)
  auto k1 = p.s.bind_mw(p.b.qp, w1.handle, 1, SEND_SIGNALED, p.b.mr.handle, p.b.buf.addr, 128, ACCESS_REMOTE_WRITE);
  ASSERT_TRUE(k1.ok()) << k1.msg;
  p.s.run();
  auto e1 = last(p.s, EventKind::ObjectModified, w1.handle);
  EXPECT_EQ(e1.change, u8(Change::Bind));
  EXPECT_EQ(e1.a, k1.value);
  auto k2 = p.s.bind_mw(p.b.qp, w1.handle, 2, SEND_SIGNALED, 0, 0, 0, 0);
  ASSERT_TRUE(k2.ok()) << k2.msg;
  p.s.run();
  e1 = last(p.s, EventKind::ObjectModified, w1.handle);
  EXPECT_EQ(e1.change, u8(Change::Unbind));
  EXPECT_EQ(e1.key_state, u8(KeyState::Valid));
  EXPECT_EQ(e1.a, k2.value);
  EXPECT_EQ(e1.c, 0u);
  p.poll(p.b.scq);
  auto w = p.s.alloc_mw(p.b.pd, MW_TYPE_2).value;
  EXPECT_EQ(last(p.s, EventKind::ObjectCreated, w.handle).key_state, u8(KeyState::Free));
  // BIND_MW -> VALID with the new rkey in a
  SendWr bind; bind.wr_id = 3; bind.opcode = WR_BIND_MW; bind.send_flags = SEND_SIGNALED; bind.mw = w.handle;
  bind.bind_rkey = inc(w.rkey); bind.bind_mr = p.b.mr.handle; bind.bind_addr = p.b.buf.addr; bind.bind_length = 256;
  bind.bind_access = ACCESS_REMOTE_WRITE;
  ASSERT_EQ(p.send_one(p.b, bind).status, WC_SUCCESS);
  auto e = last(p.s, EventKind::ObjectModified, w.handle);
  EXPECT_EQ(e.change, u8(Change::Bind));
  EXPECT_EQ(e.key_state, u8(KeyState::Valid));
  EXPECT_EQ(e.a, inc(w.rkey));
  // SEND_WITH_INV from the peer: the responder invalidates it -> FREE, change REMOTE_INV
  ASSERT_TRUE(p.recv(p.b, 8192, 64, 9).ok());
  SendWr s; s.wr_id = 8; s.opcode = WR_SEND_WITH_INV; s.send_flags = SEND_SIGNALED; s.imm_data = inc(w.rkey);
  s.sg_list = {{p.a.buf.addr, 16, p.a.mr.lkey}};
  ASSERT_EQ(p.send_one(p.a, s).status, WC_SUCCESS);
  e = last(p.s, EventKind::ObjectModified, w.handle);
  EXPECT_EQ(e.change, u8(Change::RemoteInv));
  EXPECT_EQ(e.key_state, u8(KeyState::Free));
  // bound again, then its QP is destroyed: the window is FREE and the stream says so
  bind.bind_rkey = inc(inc(w.rkey));
  ASSERT_EQ(p.send_one(p.b, bind).status, WC_SUCCESS);
  p.s.drain_events();
  ASSERT_TRUE(p.s.destroy_qp(p.b.qp).ok());
  e = last(p.s, EventKind::ObjectModified, w.handle);
  EXPECT_EQ(e.change, u8(Change::QpDestroyed));
  EXPECT_EQ(e.key_state, u8(KeyState::Free));
  EXPECT_EQ(e.a, inc(inc(w.rkey)));
  EXPECT_EQ(p.s.mw_info(w.handle)->state, "free");
  ASSERT_TRUE(p.s.dealloc_mw(w.handle).ok());
  EXPECT_EQ(last(p.s, EventKind::ObjectDestroyed, w.handle).key_state, u8(KeyState::Invalid));
}

TEST(EventsTyped, OtherModificationsAndUntypedKinds) {
  Pair p;
  p.s.drain_events();
  QpAttr at; at.qp_access_flags = ACCESS_LOCAL_WRITE;
  ASSERT_TRUE(p.s.modify_qp(p.a.qp, at, QP_ACCESS_FLAGS).ok());
  auto e = last(p.s, EventKind::ObjectModified, p.a.qp);
  EXPECT_EQ(e.change, u8(Change::ModifyQp));
  EXPECT_EQ(e.key_state, Event::kNone);   // not a key
  // packets, WQEs and completions carry neither
  SendWr w; w.wr_id = 1; w.opcode = WR_RDMA_WRITE; w.send_flags = SEND_SIGNALED;
  w.sg_list = {{p.a.buf.addr, 64, p.a.mr.lkey}}; w.remote_addr = p.b.buf.addr; w.rkey = p.b.mr.rkey;
  EXPECT_EQ(p.send_one(p.a, w).status, WC_SUCCESS);
  size_t seen = 0;
  for (auto& x : p.s.drain_events()) {
    EXPECT_EQ(x.change, Event::kNone) << name_of(kEventKindNames, uint32_t(x.kind));
    EXPECT_EQ(x.key_state, Event::kNone) << name_of(kEventKindNames, uint32_t(x.kind));
    seen++;
  }
  EXPECT_GT(seen, 4u);
}
