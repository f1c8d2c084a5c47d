// The memory commands (app/protocol/commands/memory.ts) as libibverbs calls: how `verbslab export-c` writes each step
// (app/scenario/export-c.ts writes the program around them). Typed by the descriptor table, so a step command
// without its emitter does not compile.
import { flags, u64Literal, type CExport } from './emitter.ts';
import type { memoryCommands } from '../../protocol/commands/memory.ts';

export const memoryC: CExport<typeof memoryCommands> = {
  'pd.alloc': ({ a, ctx, ptrCall, newObj }) => { ptrCall(newObj('pd').c, `ibv_alloc_pd(${ctx.h(a.device, 'device')})`, 'ibv_alloc_pd'); },
  'pd.dealloc': ({ a, ctx, intCall }) => { intCall(`ibv_dealloc_pd(${ctx.h(a.pd, 'pd')})`, 'ibv_dealloc_pd'); },
  'buffer.alloc': ({ n, a, B, what, newObj }) => {
    const o = newObj('buffer');
    B(`${o.c}_len = ${a.length};`);
    B(`CHECK(${n}, posix_memalign((void **)&${o.c}, 4096, ${o.c}_len) == 0, ${what(`posix_memalign ${a.length} bytes`)});`);
    B(`memset(${o.c}, 0, ${o.c}_len);`);
  },
  'buffer.free': ({ a, ctx, B }) => { B(`free(${ctx.h(a.buffer, 'buffer')});`); },
  'memory.write': ({ e, n, a, ctx, B }) => {
    const addr = ctx.n(a.addr);
    if (typeof a.data === 'string') {
      const hex = a.data;
      const bytes = hex.match(/../g) ?? [];
      const arr = `data_${n}`;
      e.global(`static const uint8_t ${arr}[${Math.max(1, bytes.length)}] = { ${bytes.length ? bytes.map((b) => `0x${b}`).join(', ') : '0'} };`);
      B(`memcpy((void *)(uintptr_t)${addr}, ${arr}, ${bytes.length});`);
    } else if (a.fill && typeof a.fill === 'object') {
      const f = a.fill as { byte: number; length: number };
      B(`memset((void *)(uintptr_t)${addr}, 0x${f.byte.toString(16)}, ${f.length});`);
    }
  },
  'memory.read': ({ n, a, ctx, B, what }) => { B(`dump(${what(`step ${n} memory`)}, ${ctx.n(a.addr)}, ${a.length});`); },
  'mr.reg': ({ a, ctx, ptrCall, newObj }) => {
    const o = newObj('mr');
    const acc = flags(a.access as string[]);
    const call = a.iova !== undefined
      ? `ibv_reg_mr_iova(${ctx.h(a.pd, 'pd')}, (void *)(uintptr_t)${ctx.n(a.addr)}, ${ctx.n(a.length)}, ${ctx.n(a.iova)}, ${acc})`
      : `ibv_reg_mr(${ctx.h(a.pd, 'pd')}, (void *)(uintptr_t)${ctx.n(a.addr)}, ${ctx.n(a.length)}, ${acc})`;
    ptrCall(o.c, call, `ibv_reg_mr access ${flags(a.access as string[], '0')}`);
  },
  'mr.rereg': ({ a, ctx, intCall }) => {
    const fl: string[] = [];
    if (a.addr !== undefined || a.length !== undefined) fl.push('IBV_REREG_MR_CHANGE_TRANSLATION');
    if (a.pd !== undefined) fl.push('IBV_REREG_MR_CHANGE_PD');
    if (a.access !== undefined) fl.push('IBV_REREG_MR_CHANGE_ACCESS');
    const mr = ctx.h(a.mr, 'mr');
    intCall(`ibv_rereg_mr(${mr}, ${flags(fl)}, ${a.pd !== undefined ? ctx.h(a.pd, 'pd') : 'NULL'}, ${a.addr !== undefined ? `(void *)(uintptr_t)${ctx.n(a.addr)}` : 'NULL'}, ${a.length !== undefined ? ctx.n(a.length) : '0'}, ${flags(a.access as string[])})`, 'ibv_rereg_mr', true);
  },
  'mr.dereg': ({ a, ctx, intCall }) => { intCall(`ibv_dereg_mr(${ctx.h(a.mr, 'mr')})`, 'ibv_dereg_mr'); },
  // libibverbs has no query verb for an MR: the program prints the keys struct ibv_mr holds
  'mr.query': ({ n, a, ctx, B }) => {
    const mr = ctx.h(a.mr, 'mr');
    B(`printf("step ${n}: lkey 0x%x rkey 0x%x length %zu\\n", ${mr}->lkey, ${mr}->rkey, ${mr}->length);`);
  },
  'mr.alloc': ({ a, newObj, soft }) => {
    newObj('mr', { softwareOnly: 'kernel ib_alloc_mr: fast-registration MRs are not exposed by libibverbs' });
    soft(`mr.alloc ${JSON.stringify(a)}: kernel-only ib_alloc_mr(pd, IB_MR_TYPE_${a.indirect ? 'SG_GAPS' : 'MEM_REG'}, ${String(a.maxNumSg)}); user space has no fast-registration MR (mlx5 offers mlx5dv_create_mkey)`);
  },
  'mr.map_sg': ({ soft }) => { soft('mr.map_sg: kernel-only ib_map_mr_sg() building the fast-registration page list'); },
  'mw.alloc': ({ a, ex, ctx, B, ptrCall, newObj }) => {
    const o = newObj('mw', { mwType: a.type === 'IBV_MW_TYPE_2' ? 2 : 1 });
    ptrCall(o.c, `ibv_alloc_mw(${ctx.h(a.pd, 'pd')}, ${String(a.type)})`, `ibv_alloc_mw ${String(a.type)}`);
    if (!ex.error) B(`${o.c}_rkey = ${o.c}->rkey;`);
  },
  'mw.dealloc': ({ a, ctx, intCall }) => { intCall(`ibv_dealloc_mw(${ctx.h(a.mw, 'mw')})`, 'ibv_dealloc_mw'); },
  'mw.bind': ({ n, a, ex, ctx, B, what, handled }) => {
    B('{');
    B(`    struct ibv_mw_bind b = { .wr_id = ${u64Literal(a.wrId)}, .send_flags = ${flags(a.sendFlags as string[])},`);
    B(`        .bind_info = { .mr = ${ctx.h(a.mr, 'mr')}, .addr = ${ctx.n(a.addr)}, .length = ${ctx.n(a.length)}, .mw_access_flags = ${flags(a.access as string[])} } };`);
    B(`    rc = ibv_bind_mw(${ctx.h(a.qp, 'qp')}, ${ctx.h(a.mw, 'mw')}, &b);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_bind_mw fails with ${ex.error}`)});`); handled(); }
    else {
      B(`CHECK(${n}, rc == 0, ${what('ibv_bind_mw (the new rkey is in mw->rkey; the bind completes on the send CQ)')});`);
      B(`${ctx.h(a.mw, 'mw')}_rkey = ${ctx.h(a.mw, 'mw')}->rkey;`);
    }
  },
};
