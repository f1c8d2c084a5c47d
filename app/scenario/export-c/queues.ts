// The queue commands (app/protocol/commands/queues.ts) as libibverbs calls: how `verbslab export-c` writes each step
// (app/scenario/export-c.ts writes the program around them). Typed by the descriptor table, so a step command
// without its emitter does not compile.
import { emitPoll, emitPostRecv, emitPostSend, flags, isObj, u64Literal, type CExport, type Obj } from './emitter.ts';
import type { queueCommands } from '../../protocol/commands/queues.ts';
import { QpAttrMask } from '../../protocol/enums.ts';

export const queueC: CExport<typeof queueCommands> = {
  'cq.create': ({ n, a, ctx, B, what, ptrCall, newObj }) => {
    const dev = ctx.h(a.device, 'device');
    const o = newObj('cq', { device: String(a.device), channel: !!a.channel });
    if (a.channel) {
      B(`if (!${dev}_channel) ${dev}_channel = ibv_create_comp_channel(${dev});`);
      B(`CHECK(${n}, ${dev}_channel != NULL, ${what('ibv_create_comp_channel')});`);
    }
    ptrCall(o.c, `ibv_create_cq(${dev}, ${a.cqe}, NULL, ${a.channel ? `${dev}_channel` : 'NULL'}, 0)`, `ibv_create_cq cqe ${a.cqe}`);
  },
  'cq.destroy': ({ a, ctx, intCall }) => { intCall(`ibv_destroy_cq(${ctx.h(a.cq, 'cq')})`, 'ibv_destroy_cq'); },
  'cq.req_notify': ({ a, ctx, intCall, soft }) => {
    if (a.reportMissedEvents) soft('reportMissedEvents: kernel IB_CQ_REPORT_MISSED_EVENTS (the arm call returns > 0 when completions may be waiting) has no libibverbs form; the plain arm is used and its "missed events" result is not checked');
    intCall(`ibv_req_notify_cq(${ctx.h(a.cq, 'cq')}, ${a.solicitedOnly ? 1 : 0})`, `ibv_req_notify_cq solicited_only=${a.solicitedOnly ? 1 : 0}`);
  },
  'cq.poll': ({ e, st, n, ctx, B, handled }) => { emitPoll(e, ctx, st, n, B); handled(); },
  'cq.get_event': ({ e, n, a, ex, ctx, B, what, handled }) => {
    const dev = ctx.h(a.device, 'device');
    B('{');
    B('    struct ibv_cq *ev_cq = NULL;');
    B(`    rc = ${dev}_channel ? get_cq_event(${dev}_channel, &ev_cq) : (errno = EAGAIN, -1);`);
    if (ex.error) {
      B(`    CHECK(${n}, rc != 0, ${what(`no completion event (software device: ${ex.error}; libibverbs: the channel read would block, EAGAIN)`)});`);
      handled();
    } else B(`    CHECK(${n}, rc == 0, ${what('ibv_get_cq_event')});`);
    if (isObj(ex.result) && typeof ex.result.cq === 'string') {
      const cq = e.handle(ex.result.cq, 'cq');
      if (!cq.soft) B(`    CHECK(${n}, ev_cq == ${cq.expr}, ${what(`the event is for ${ex.result.cq}`)});`);
    }
    B('    (void)ev_cq;');
    B('}');
  },
  'cq.ack_events': ({ a, ctx, B }) => { B(`ibv_ack_cq_events(${ctx.h(a.cq, 'cq')}, ${a.n});`); },
  'srq.create': ({ n, a, ex, ctx, B, what, newObj, handled }) => {
    const o = newObj('srq');
    B('{');
    B(`    struct ibv_srq_init_attr ia = { .attr = { .max_wr = ${a.maxWr}, .max_sge = ${a.maxSge}, .srq_limit = ${a.srqLimit} } };`);
    B(`    ${o.c} = ibv_create_srq(${ctx.h(a.pd, 'pd')}, &ia);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL && errno == ${ex.error}, ${what(`ibv_create_srq fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, ${o.c} != NULL, ${what('ibv_create_srq')});`);
  },
  'srq.modify': ({ n, a, ex, ctx, B, what, handled }) => {
    B('{');
    B(`    struct ibv_srq_attr sa = { .srq_limit = ${a.srqLimit} };`);
    B(`    rc = ibv_modify_srq(${ctx.h(a.srq, 'srq')}, &sa, IBV_SRQ_LIMIT);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_modify_srq fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, rc == 0, ${what(`ibv_modify_srq srq_limit=${a.srqLimit}`)});`);
  },
  'srq.destroy': ({ a, ctx, intCall }) => { intCall(`ibv_destroy_srq(${ctx.h(a.srq, 'srq')})`, 'ibv_destroy_srq'); },
  'srq.post_recv': (e) => emitPostRecv(e),
  'qp.create': ({ n, a, ex, ctx, B, what, newObj, handled }) => {
    const o = newObj('qp');
    const cap = a.cap as Record<string, number>;
    B('{');
    B(`    struct ibv_qp_init_attr ia = { .send_cq = ${ctx.h(a.sendCq, 'cq')}, .recv_cq = ${ctx.h(a.recvCq, 'cq')}, .srq = ${a.srq !== undefined ? ctx.h(a.srq, 'srq') : 'NULL'},`);
    B(`        .cap = { .max_send_wr = ${cap.maxSendWr}, .max_recv_wr = ${cap.maxRecvWr}, .max_send_sge = ${cap.maxSendSge}, .max_recv_sge = ${cap.maxRecvSge}, .max_inline_data = ${cap.maxInlineData} },`);
    B(`        .qp_type = ${String(a.qpType)}, .sq_sig_all = ${a.sqSigAll ? 1 : 0} };`);
    B(`    ${o.c} = ibv_create_qp(${ctx.h(a.pd, 'pd')}, &ia);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL && errno == ${ex.error}, ${what(`ibv_create_qp fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, ${o.c} != NULL, ${what(`ibv_create_qp ${String(a.qpType)}`)});`);
  },
  'qp.modify': ({ n, a, ex, ctx, B, what, handled }) => {
    const at = a.attr as Record<string, unknown>;
    const mask = a.mask as string[];
    B('{');
    B('    struct ibv_qp_attr qa;');
    B('    memset(&qa, 0, sizeof qa);');
    const map: Record<string, string> = {
      qpState: 'qp_state', pathMtu: 'path_mtu', qkey: 'qkey', rqPsn: 'rq_psn', sqPsn: 'sq_psn', destQpNum: 'dest_qp_num',
      pkeyIndex: 'pkey_index', portNum: 'port_num', maxRdAtomic: 'max_rd_atomic', maxDestRdAtomic: 'max_dest_rd_atomic',
      minRnrTimer: 'min_rnr_timer', timeout: 'timeout', retryCnt: 'retry_cnt', rnrRetry: 'rnr_retry',
    };
    for (const [k, v] of Object.entries(at)) {
      if (k === 'qpAccessFlags') B(`    qa.qp_access_flags = ${flags(v as string[])};`);
      else if (map[k]) B(`    qa.${map[k]} = ${typeof v === 'string' && !v.startsWith('$') ? v : ctx.n(v)};`);
    }
    if (at.destDevice !== undefined) {
      B(`    qa.ah_attr.is_global = 1; qa.ah_attr.port_num = 1; qa.ah_attr.grh.hop_limit = 1; qa.ah_attr.grh.sgid_index = ${at.sgidIndex ?? 'gid_index()'};`);
      B(`    ibv_query_gid(${ctx.h(at.destDevice, 'device')}, 1, ${at.sgidIndex ?? 'gid_index()'}, &qa.ah_attr.grh.dgid);`);
    }
    B(`    rc = ibv_modify_qp(${ctx.h(a.qp, 'qp')}, &qa, ${mask.map((m) => (m in QpAttrMask.values ? m : '0')).join(' | ')});`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_modify_qp fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, rc == 0, ${what(`ibv_modify_qp ${at.qpState ? `to ${String(at.qpState)}` : ''}`)});`);
  },
  'qp.query': ({ n, a, ex, ctx, B, what, handled }) => {
    B('{');
    B('    struct ibv_qp_attr qa; struct ibv_qp_init_attr ia;');
    B(`    rc = ibv_query_qp(${ctx.h(a.qp, 'qp')}, &qa, IBV_QP_STATE, &ia);`);
    B(`    printf("step ${n}: QP state %d\\n", (int)qa.qp_state);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_query_qp fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, rc == 0, ${what('ibv_query_qp')});`);
  },
  'qp.destroy': ({ a, ctx, intCall }) => { intCall(`ibv_destroy_qp(${ctx.h(a.qp, 'qp')})`, 'ibv_destroy_qp'); },
  'qp.connect': ({ e, n, a, ex, ctx, B, what, soft, handled }) => {
    if (a.remote !== undefined) { soft('qp.connect to a remote host: the exported program has no other host to connect to'); return; }
    const q1 = e.objs.get(String(a.qp)), q2 = e.objs.get(String(a.peer));
    const qa = ctx.h(a.qp, 'qp'), qb = ctx.h(a.peer, 'qp');
    const devOf = (q?: Obj) => (q?.device ? e.objs.get(q.device)?.c : undefined);
    const da = devOf(q1), db = devOf(q2);
    if (!da || !db) ctx.soft.push('the QPs\' devices are unknown');
    const acc = flags(a.access as string[]);
    B(`rc = modify_to_rts(${qa}, ${db ?? 'NULL'}, ${qb}->qp_num, ${acc}, ${String(a.pathMtu)});`);
    if (a.qp !== a.peer) B(`if (!rc) rc = modify_to_rts(${qb}, ${da ?? 'NULL'}, ${qa}->qp_num, ${acc}, ${String(a.pathMtu)});`);
    if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`connect fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, rc == 0, ${what(`connect ${String(a.qp)} <-> ${String(a.peer)}: RESET->INIT->RTR->RTS`)});`);
  },
  'ah.create': ({ n, a, ex, ctx, B, what, newObj, handled }) => {
    const o = newObj('ah');
    B('{');
    B(`    struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .sgid_index = ${a.sgidIndex}, .hop_limit = 1 } };`);
    B(`    ibv_query_gid(${ctx.h(a.destDevice, 'device')}, 1, ${a.sgidIndex}, &aa.grh.dgid);`);
    B(`    ${o.c} = ibv_create_ah(${ctx.h(a.pd, 'pd')}, &aa);`);
    B('}');
    if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL, ${what(`ibv_create_ah fails with ${ex.error}`)});`); handled(); }
    else B(`CHECK(${n}, ${o.c} != NULL, ${what('ibv_create_ah')});`);
  },
  'post.send': ({ e, st, n, ctx, B, handled }) => { emitPostSend(e, ctx, st, n, B); handled(); },
  'post.recv': (e) => emitPostRecv(e),
  'cm.createId': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.bind': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.listen': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.connect': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.accept': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.disconnect': ({ st, soft }) => { soft(`${st.cmd}: the software device's CM (docs/cm.md); not exported to libibverbs C (a librdmacm program does this)`); },
  'cm.list': ({ st, soft }) => { soft(`${st.cmd}: a console command (the CM IDs of the session); nothing to do on libibverbs`); },
};
