// Protection domains, buffers, memory, memory regions and memory windows.
import { z } from 'zod';
import { command, RHandle, RU64 } from '../descriptor.ts';
import { Addr, Hex, Len, MrOut, MwOut, U64, accessList, sendFlags, type Shared } from './shared.ts';

export const memoryCommands = {
  'pd.alloc': command({ args: (h) => ({ device: h('device') }), result: z.object({ pd: RHandle, device: RHandle }), creates: 'pd' }),
  'pd.dealloc': command({ args: (h) => ({ pd: h('pd') }), result: z.object({ pd: RHandle }) }),
  'buffer.alloc': command({
    args: () => ({ length: z.number().int().min(1).max(64 * 1024 * 1024) }),
    result: z.object({ buffer: RHandle, addr: RU64, length: RU64 }), creates: 'buffer',
  }),
  'buffer.free': command({ args: (h) => ({ buffer: h('buffer') }), result: z.object({ buffer: RHandle }) }),
  'memory.write': command({
    args: () => ({ addr: Addr, data: Hex.optional(), fill: z.object({ byte: z.number().int().min(0).max(255), length: z.number().int().min(1).max(64 * 1024 * 1024) }).strict().optional() }),
    result: z.object({ addr: z.number(), written: z.number() }),
  }),
  'memory.read': command({
    args: () => ({ addr: Addr, length: z.number().int().min(0).max(1024 * 1024) }),
    result: z.object({ addr: z.number(), length: z.number(), hex: z.string() }), readOnly: true,
  }),
  'mr.reg': command({ args: (h) => ({ pd: h('pd'), addr: Addr, length: Len, access: accessList, iova: Addr.optional() }), result: MrOut, creates: 'mr' }),
  'mr.rereg': command({
    args: (h) => ({ mr: h('mr'), pd: h('pd').optional(), addr: Addr.optional(), length: Len.optional(), access: accessList.optional() }),
    result: MrOut,
  }),
  'mr.dereg': command({ args: (h) => ({ mr: h('mr') }), result: z.object({ mr: RHandle }) }),
  // the MR as the device holds it now: keys, state (a fast-registration MR is FREE until REG_MR), page list
  'mr.query': command({ args: (h) => ({ mr: h('mr') }), result: MrOut, readOnly: true }),
  'mr.alloc': command({
    args: (h) => ({ pd: h('pd'), maxNumSg: z.number().int().min(1).max(4096), indirect: z.boolean().default(false) }),
    result: MrOut, creates: 'mr',
  }),
  'mr.map_sg': command({
    args: (h, x: Shared) => ({ mr: h('mr'), sgList: z.array(x.Sge).min(1).max(4096), pageSize: z.number().int().min(512).max(1 << 30).default(4096) }),
    result: z.object({ mapped: z.number(), of: z.number(), mrInfo: MrOut.nullable() }),
  }),
  'mw.alloc': command({ args: (h) => ({ pd: h('pd'), type: z.enum(['IBV_MW_TYPE_1', 'IBV_MW_TYPE_2']) }), result: MwOut, creates: 'mw' }),
  'mw.dealloc': command({ args: (h) => ({ mw: h('mw') }), result: z.object({ mw: RHandle }) }),
  'mw.bind': command({
    args: (h) => ({ qp: h('qp'), mw: h('mw'), mr: h('mr'), addr: Addr, length: Len, access: accessList, wrId: U64.default(0), sendFlags: sendFlags.default(['IBV_SEND_SIGNALED']) }),
    result: z.object({ mw: RHandle, rkey: z.number() }),
  }),
};
