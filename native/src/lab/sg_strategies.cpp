// The five strategies of the SG lab: what the initiator registers for one I/O, the descriptor entries it sends,
// and what it copies and invalidates when the response comes back.
#include <cerrno>
#include <cstring>

#include "lab/sg_run.h"

namespace vl::sglab {

Result<MrInfo> Run::alloc_mr(bool indirect) {
  auto m = s.alloc_mr(pi, max_sg, indirect);
  if (m.ok()) { mrs_all.push_back(m.value.handle); r.c.mrs_held++; }
  return m;
}

bool Run::refuse_break(const SgMapping& m, uint64_t page_size, const std::string& what) {
  r.mapped = m.mapped;
  r.first_break = m.first_break;
  r.break_why = m.first_break < m.elements.size() ? m.elements[m.first_break].why : SG_OK;
  return refuse(EINVAL, what + ": ib_map_mr_sg mapped " + std::to_string(m.mapped) + " of " + std::to_string(list.size()) +
                            " elements; element " + std::to_string(m.first_break) + " " + sg_break_text(r.break_why, page_size));
}

bool Run::strategy_setup() {
  switch (st) {
    case SgStrategy::FastReg:
    case SgStrategy::Indirect:
      for (auto& sl : slots) {
        auto m = alloc_mr(st == SgStrategy::Indirect);   // EOPNOTSUPP on a profile without SG_GAPS: the device's words
        if (!m.ok()) return refuse(m.err, "alloc_mr: " + m.msg);
        sl.mr = m.value.handle;
      }
      return true;
    case SgStrategy::Bounce: {
      const uint64_t pages = (total + 4095) / 4096;
      if (pages > max_sg)
        return refuse(EINVAL, "bounce: the buffer needs " + std::to_string(pages) + " pages, max_num_sg is " + std::to_string(max_sg));
      for (auto& sl : slots) {
        auto b = buffer(total);
        if (!b.ok()) return refuse(b.err, "alloc_buffer: " + b.msg);
        sl.bounce = b.value;
        auto m = alloc_mr(false);
        if (!m.ok()) return refuse(m.err, "alloc_mr: " + m.msg);
        sl.mr = m.value.handle;
      }
      return true;
    }
    case SgStrategy::MultiMr: {
      // one MR per gap-free run: the page rule applied to what the previous MR left (srp_map_sg_fr does the same)
      std::vector<Sge> rest = slots[0].sge;
      runs = 0;
      while (!rest.empty()) {
        const SgMapping m = sg_to_pages(rest, 4096, max_sg);
        if (!m.mapped)
          return refuse(EINVAL, "multi_mr: an element needs more than max_num_sg (" + std::to_string(max_sg) + ") pages");
        rest.erase(rest.begin(), rest.begin() + m.mapped);
        runs++;
      }
      if (runs > cfg.mr_pool)
        return refuse(ENOMEM, "multi_mr: one I/O needs " + std::to_string(runs) + " MRs, the pool has " + std::to_string(cfg.mr_pool));
      for (uint32_t i = 0; i < cfg.mr_pool; i++) {
        auto m = alloc_mr(false);
        if (!m.ok()) return refuse(m.err, "alloc_mr: " + m.msg);
        pool.push_back(m.value.handle);
      }
      return true;
    }
    case SgStrategy::Pool512: {
      // the page rule at 512-byte pages: interior boundaries on sectors; a byte-aligned list is out of its reach
      const SgMapping m = sg_to_pages(slots[0].sge, 512, UINT32_MAX);
      if (m.mapped < list.size()) return refuse_break(m, 512, "pool512 (no per-I/O registration, falls back to a bounce buffer)");
      runs = static_cast<uint32_t>(m.segs.size());
      for (auto& sl : slots) {
        auto mr = s.reg_mr(pi, sl.mem.addr, sl.mem.length, kAcc);
        if (!mr.ok()) return refuse(mr.err, "reg_mr: " + mr.msg);
        sl.pre = mr.value;
        mrs_all.push_back(mr.value.handle);
        r.c.mrs_held++;
      }
      return true;
    }
  }
  return refuse(EINVAL, "strategy: unknown");
}

bool Run::strategy_can_start(const Slot&) const { return st != SgStrategy::MultiMr || pool.size() >= runs; }

int Run::map(Handle mr, const std::vector<Sge>& sg) {
  auto n = s.map_mr_sg(mr, sg, 4096);
  if (!n.ok()) { refuse(n.err, "map_mr_sg: " + n.msg); return -1; }
  return static_cast<int>(n.value);
}

// IB_WR_REG_MR with the key byte advanced (ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey))), and its entry.
void Run::reg(Slot& sl, Handle mr, uint64_t len, std::vector<SendWr>& wrs, std::vector<Entry>& ents) {
  const MrInfo info = *s.mr_info(mr);
  const uint32_t key = (info.lkey & 0xffffff00u) | ((info.lkey + 1) & 0xffu);
  SendWr w;
  w.wr_id = tag(T_REG, sl.index); w.opcode = WR_REG_MR;
  w.reg_mr = mr; w.reg_key = key; w.reg_access = kAcc;
  wrs.push_back(w);
  r.c.registrations++;
  ents.push_back({info.iova, key, static_cast<uint32_t>(len)});
}

// The initiator's CPU copies between the list and the bounce buffer.
void Run::copy(Slot& sl, bool to_bounce) {
  uint64_t off = 0;
  for (auto& e : sl.sge) {
    uint8_t* a = host(e.addr, e.length);
    uint8_t* b = host(sl.bounce.addr + off, e.length);
    if (to_bounce) std::memcpy(b, a, e.length);
    else std::memcpy(a, b, e.length);
    off += e.length;
  }
  if (to_bounce) S.note_write(di, sl.bounce.addr, total);
  else for (auto& e : sl.sge) S.note_write(di, e.addr, e.length);
  r.c.bytes_copied += total;
}

bool Run::strategy_map(Slot& sl, std::vector<SendWr>& wrs, std::vector<Entry>& ents) {
  switch (st) {
    case SgStrategy::FastReg: {
      const int n = map(sl.mr, sl.sge);
      if (n < 0) return false;
      if (static_cast<size_t>(n) < sl.sge.size())   // the device mapped with the same rule: show where and why
        return refuse_break(sg_to_pages(sl.sge, 4096, max_sg), 4096, "fast_reg (the I/O fails with -EINVAL, as nvme-rdma / iser do)");
      r.mapped = static_cast<uint32_t>(n);
      reg(sl, sl.mr, total, wrs, ents);
      return true;
    }
    case SgStrategy::Bounce: {
      if (sl.op == OP_WRITE) copy(sl, true);
      if (map(sl.mr, {{sl.bounce.addr, static_cast<uint32_t>(total), 0}}) != 1) return refuse(EINVAL, "bounce: map_mr_sg did not map the bounce buffer");
      reg(sl, sl.mr, total, wrs, ents);
      return true;
    }
    case SgStrategy::MultiMr: {
      std::vector<Sge> rest = sl.sge;
      while (!rest.empty()) {
        const Handle mr = pool.back();
        pool.pop_back();
        sl.held.push_back(mr);
        const int n = map(mr, rest);
        if (n <= 0) return n < 0 ? false : refuse(EINVAL, "multi_mr: map_mr_sg mapped nothing");
        uint64_t len = 0;
        for (int i = 0; i < n; i++) len += rest[i].length;
        reg(sl, mr, len, wrs, ents);
        rest.erase(rest.begin(), rest.begin() + n);
      }
      return true;
    }
    case SgStrategy::Pool512:
      for (auto& g : sg_to_pages(sl.sge, 512, UINT32_MAX).segs) ents.push_back({g.va, sl.pre.rkey, static_cast<uint32_t>(g.len)});
      return true;
    case SgStrategy::Indirect: {
      const int n = map(sl.mr, sl.sge);
      if (n < 0) return false;
      r.mapped = static_cast<uint32_t>(n);
      if (static_cast<size_t>(n) < sl.sge.size()) {
        const SgMapping m = sg_to_entries(sl.sge, max_sg);
        if (!cfg.ignore_short_map)
          return refuse_break(m, 4096, "indirect: max_num_sg is " + std::to_string(max_sg) + " (mlx5_ib_sg_to_klms stops at max_descs; the I/O fails with -EINVAL)");
        r.first_break = m.first_break; r.break_why = SG_BREAK_ENTRY_LIMIT;
      }
      // ignore_short_map: the key covers only the mapped entries but the command says the whole list; the target's
      // access past the key's length is refused by the device (IBV_WC_REM_ACCESS_ERR), not silently misplaced
      reg(sl, sl.mr, total, wrs, ents);
      return true;
    }
  }
  return refuse(EINVAL, "strategy: unknown");
}

void Run::strategy_done(Slot& sl, std::vector<SendWr>& inv) {
  if (st == SgStrategy::Bounce && sl.op == OP_READ) copy(sl, false);
  std::vector<Handle> keys = sl.held;
  if (sl.mr) keys.push_back(sl.mr);
  for (Handle mr : keys) {                          // srp_inv_rkey / iser_inv_rkey: LOCAL_INV of every key sent
    SendWr w;
    w.wr_id = tag(T_INV, sl.index); w.opcode = WR_LOCAL_INV;
    w.imm_data = s.mr_info(mr)->lkey;
    inv.push_back(w);
    r.c.invalidations++;
  }
}

}  // namespace vl::sglab
