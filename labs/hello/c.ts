// hello.write in `verbslab export-c`: the program writes the same message into its buffer, posts the same signaled
// IBV_WR_RDMA_WRITE with ibv_post_send and polls its completion, as the handler does on the device.
import type { CExport } from '../../app/scenario/export-c/emitter.ts';
import type { helloCommands } from './commands.ts';
import { encodeHello, type HelloKindName } from './message.ts';

export const c: CExport<typeof helloCommands> = {
  'hello.write': ({ e, n, a, ctx, B, what }) => {
    const msg = encodeHello((a.kind ?? 'GREETING') as HelloKindName, String(a.text));
    const arr = `hello_${n}`;
    e.global(`static const uint8_t ${arr}[${msg.length}] = { ${[...msg].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(', ')} };`);
    B('{');
    B(`    memcpy((void *)(uintptr_t)${ctx.n(a.addr)}, ${arr}, ${msg.length});`);
    B(`    struct ibv_sge sge = { .addr = ${ctx.n(a.addr)}, .length = ${msg.length}, .lkey = ${ctx.n(a.lkey)} };`);
    B('    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;');
    B(`    wr.wr.rdma.remote_addr = ${ctx.n(a.remoteAddr)}; wr.wr.rdma.rkey = ${ctx.n(a.rkey)};`);
    B(`    rc = ibv_post_send(${ctx.h(a.qp, 'qp')}, &wr, &bad);`);
    B(`    CHECK(${n}, rc == 0, ${what('ibv_post_send IBV_WR_RDMA_WRITE (the hello message)')});`);
    B(`    rc = poll_cq_n(${ctx.h(a.cq, 'cq')}, wcs, 1, 1);`);
    B(`    CHECK(${n}, rc == 1 && wcs[0].status == IBV_WC_SUCCESS, ${what('the hello WRITE completes with IBV_WC_SUCCESS')});`);
    B('}');
  },
};
