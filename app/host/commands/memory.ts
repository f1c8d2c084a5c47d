// Handlers of the memory commands (app/protocol/commands/memory.ts): PDs, buffers, memory, MRs, MWs.
import { Access, MwType, SendFlag, flagsOf } from '../../protocol/index.ts';
import type { memoryCommands } from '../../protocol/commands/memory.ts';
import { fail, ok, res, st, type Handlers, type Outcome } from './handler.ts';
import { mrOut, mwOut } from './out.ts';

// ibv_rereg_mr flags (rdma-core verbs.h enum ibv_rereg_mr_flags)
const IBV_REREG_MR_CHANGE_TRANSLATION = 1;
const IBV_REREG_MR_CHANGE_PD = 2;
const IBV_REREG_MR_CHANGE_ACCESS = 4;

export const memoryHandlers: Handlers<typeof memoryCommands> = {
  'pd.alloc': (x, a) => res(x.s.alloc_pd(a.device), (pd) => ({ pd, device: a.device })),
  'pd.dealloc': (x, a) => st(x.s.dealloc_pd(a.pd), { pd: a.pd }),
  'buffer.alloc': (x, a) => res(x.s.alloc_buffer(a.length), (b) => ({ buffer: b.handle, addr: b.addr, length: b.length })),
  'buffer.free': (x, a) => st(x.s.free_buffer(a.buffer), { buffer: a.buffer }),
  'memory.write': (x, a) => {
    const { data, fill } = a;
    if ((data === undefined) === (fill === undefined)) return fail('EINVAL', 'args.data: give exactly one of "data" (hex) or "fill"', 'args.data');
    const bytes = data !== undefined ? Buffer.from(data, 'hex') : Buffer.alloc(fill!.length, fill!.byte);
    return st(x.s.write_memory(a.addr, bytes), { addr: a.addr, written: bytes.length });
  },
  'memory.read': (x, a) => res(x.s.read_memory(a.addr, a.length), (b) => ({ addr: a.addr, length: b.length, hex: b.toString('hex') })),
  'mr.reg': (x, a) => res(x.s.reg_mr(a.pd, a.addr, a.length, flagsOf(Access, a.access), a.iova), mrOut),
  'mr.rereg': (x, a) => {
    let flags = 0;
    if (a.addr !== undefined || a.length !== undefined) flags |= IBV_REREG_MR_CHANGE_TRANSLATION;
    if (a.pd !== undefined) flags |= IBV_REREG_MR_CHANGE_PD;
    if (a.access !== undefined) flags |= IBV_REREG_MR_CHANGE_ACCESS;
    if (!flags) return fail('EINVAL', 'args: give at least one of pd, addr/length or access to change', 'args');
    const cur = x.s.mr_info(a.mr);
    if (!cur) return fail('ENOENT', `args.mr: no MR with handle ${a.mr}`, 'args.mr');
    return res(x.s.rereg_mr(a.mr, flags, a.pd ?? cur.pd, a.addr ?? cur.addr, a.length ?? cur.length,
      a.access !== undefined ? flagsOf(Access, a.access) : cur.access), mrOut);
  },
  'mr.dereg': (x, a) => st(x.s.dereg_mr(a.mr), { mr: a.mr }),
  'mr.query': (x, a) => {
    const m = x.s.mr_info(a.mr);
    return m ? ok(mrOut(m)) : fail('ENOENT', `args.mr: no MR with handle ${a.mr}`, 'args.mr');
  },
  'mr.alloc': (x, a) => res(x.s.alloc_mr(a.pd, a.maxNumSg, a.indirect), mrOut),
  'mr.map_sg': (x, a) => {
    const r = x.s.map_mr_sg(a.mr, a.sgList, a.pageSize);
    if (r.err) return res(r, () => null) as Outcome<never>;
    const info = x.s.mr_info(a.mr);
    return ok({ mapped: r.value as number, of: a.sgList.length, mrInfo: info ? mrOut(info) : null });
  },
  'mw.alloc': (x, a) => res(x.s.alloc_mw(a.pd, MwType.values[a.type]), mwOut),
  'mw.dealloc': (x, a) => st(x.s.dealloc_mw(a.mw), { mw: a.mw }),
  'mw.bind': (x, a) => res(x.s.bind_mw(a.qp, a.mw, a.wrId, flagsOf(SendFlag, a.sendFlags), a.mr, a.addr, a.length, flagsOf(Access, a.access)),
    (rkey) => ({ mw: a.mw, rkey })),
};
