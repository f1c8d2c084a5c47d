// Export a scenario as a C program over rdma-core's libibverbs that performs the same verbs and prints
// PASS/FAIL for each expectation it can check on real hardware. What has no libibverbs equivalent
// (engine stepping, fault injection, kernel-only fast registration, report-missed-events arming, wire and key
// state observation) is written as a clear comment at the place where the scenario does it.
//   cc -Wall -Werror -o scenario scenario.c -libverbs
import { Access, QpAttrMask, SendFlag, WrOpcode } from '../protocol/enums.ts';
import { CREATES, HANDLE_FIELDS, parseRef, type ObjectKind, type Scenario, type Step } from '../protocol/scenario.ts';

type Kind = Exclude<ObjectKind, 'result'>;
interface Obj { kind: Kind | 'result'; c: string; device?: string; softwareOnly?: string; mwType?: number; channel?: boolean }

const C_KEYWORDS = new Set(['auto', 'break', 'case', 'char', 'const', 'continue', 'default', 'do', 'double', 'else', 'enum', 'extern', 'float', 'for', 'goto', 'if', 'inline', 'int', 'long', 'register', 'restrict', 'return', 'short', 'signed', 'sizeof', 'static', 'struct', 'switch', 'typedef', 'union', 'unsigned', 'void', 'volatile', 'while', 'main', 'rc', 'wcs', 'checks', 'failures', 'errno']);

/** A C string literal (ASCII only, escapes for everything else; no trigraphs). */
export function cString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '?') out += '\\?';
    else if (ch === '\n') out += '\\n';
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else for (const b of new TextEncoder().encode(ch)) out += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}
/** Text safe inside a C block comment. */
export function cComment(s: string): string {
  return s.replace(/\*\//g, '* /').replace(/\/\*/g, '/ *').replace(/\?\?/g, '? ?').replace(/[^\x20-\x7e\n]/g, '?');
}

const flags = (names: readonly string[] | undefined, zero = '0') => (names && names.length ? names.join(' | ') : zero);

function u64Literal(v: unknown): string {
  if (typeof v === 'number') return v > 0xffffffff ? `0x${v.toString(16)}ULL` : String(v);
  if (typeof v === 'string') {
    const b = BigInt(v);
    return `0x${b.toString(16)}ULL`;
  }
  return '0';
}

class Emitter {
  lines: string[] = [];
  globals: string[] = [];
  objs = new Map<string, Obj>();
  tmp = 0;
  private ind = 1;
  constructor(readonly sc: Scenario) {}
  line(s = '') { this.lines.push(s ? `${'    '.repeat(this.ind)}${s}` : ''); }
  comment(s: string) { for (const l of cComment(s).split('\n')) this.line(`/* ${l} */`); }
  open(s: string) { this.line(`${s} {`); this.ind++; }
  close(s = '}') { this.ind--; this.line(s); }
  global(decl: string) { if (!this.globals.includes(decl)) this.globals.push(decl); }

  cName(name: string): string {
    let n = name.replace(/[^A-Za-z0-9_]/g, '_');
    if (C_KEYWORDS.has(n) || /^(ibv_|IBV_|check|poll_|open_|connect_|expect_|dump|gid_)/.test(n)) n = `o_${n}`;
    return n;
  }

  declare(name: string, kind: Kind | 'result', extra: Partial<Obj> = {}): Obj {
    const c = this.cName(name);
    const o: Obj = { kind, c, ...extra };
    this.objs.set(name, o);
    const decl: Record<string, string[]> = {
      device: [`struct ibv_context *${c};`, `struct ibv_comp_channel *${c}_channel;`],
      pd: [`struct ibv_pd *${c};`],
      buffer: [`uint8_t *${c};`, `size_t ${c}_len;`],
      mr: [`struct ibv_mr *${c};`],
      mw: [`struct ibv_mw *${c};`, `uint32_t ${c}_rkey; /* current rkey: libibverbs does not update mw->rkey after a BIND_MW work request */`],
      cq: [`struct ibv_cq *${c};`],
      srq: [`struct ibv_srq *${c};`],
      qp: [`struct ibv_qp *${c};`],
      ah: [`struct ibv_ah *${c};`],
      result: [],
    };
    for (const d of decl[kind]!) this.global(d);
    return o;
  }

  /** A C expression for a handle position (a name). */
  handle(v: unknown, want: Kind): { expr: string; soft?: string } {
    if (typeof v === 'number') return { expr: 'NULL', soft: `raw handle ${v} has no libibverbs equivalent` };
    const o = this.objs.get(String(v));
    if (!o) return { expr: 'NULL', soft: `"${String(v)}" is not defined` };
    if (o.softwareOnly) return { expr: o.c, soft: `${String(v)} exists only on the software device (${o.softwareOnly})` };
    if (o.kind !== want) return { expr: 'NULL', soft: `"${String(v)}" is a ${o.kind}` };
    return { expr: o.c };
  }

  /** A C expression for a numeric position (literal or reference). */
  num(v: unknown): { expr: string; soft?: string } {
    if (typeof v === 'string' && v.startsWith('$')) {
      const r = parseRef(v)!;
      const o = this.objs.get(r.name);
      if (!o) return { expr: '0', soft: `${v}: "${r.name}" is not defined` };
      let base: string | undefined;
      const c = o.c;
      switch (`${o.kind}.${r.field}`) {
        case 'buffer.addr': base = `(uint64_t)(uintptr_t)${c}`; break;
        case 'buffer.length': base = `(uint64_t)${c}_len`; break;
        case 'mr.lkey': base = `${c}->lkey`; break;
        case 'mr.rkey': base = `${c}->rkey`; break;
        case 'mr.addr': case 'mr.iova': base = `(uint64_t)(uintptr_t)${c}->addr`; break;
        case 'mr.length': base = `(uint64_t)${c}->length`; break;
        case 'mw.rkey': base = `${c}_rkey`; break;
        case 'qp.qpNum': base = `${c}->qp_num`; break;
        case 'cq.cqe': base = `(uint64_t)${c}->cqe`; break;
        default: break;
      }
      if (o.softwareOnly) return { expr: '0', soft: `${v}: ${r.name} exists only on the software device` };
      if (!base) return { expr: '0', soft: `${v} has no libibverbs equivalent` };
      if (r.op) base = `(${base} ${r.op} ${r.operand! > 0xffffffffn ? `0x${r.operand!.toString(16)}ULL` : `0x${r.operand!.toString(16)}`})`;
      return { expr: base };
    }
    if (typeof v === 'number' && v >= 0x7f0000000000 && v < 0x800000000000) {
      return { expr: u64Literal(v), soft: `literal address 0x${v.toString(16)} is a software-device virtual address` };
    }
    return { expr: u64Literal(v) };
  }
}

/** Collect problems while building one step: any makes the step a comment. */
class StepCtx {
  soft: string[] = [];
  constructor(readonly e: Emitter) {}
  h(v: unknown, want: Kind): string { const r = this.e.handle(v, want); if (r.soft) this.soft.push(r.soft); return r.expr; }
  n(v: unknown): string { const r = this.e.num(v); if (r.soft) this.soft.push(r.soft); return r.expr; }
}

const PREAMBLE = String.raw`#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static int checks, failures;
int rc;
struct ibv_wc wcs[4096];

#define CHECK(step, cond, what) do { \
        checks++; \
        if (cond) printf("PASS step %d: %s\n", (step), (what)); \
        else { failures++; printf("FAIL step %d: %s\n", (step), (what)); goto out; } \
    } while (0)

/* Every scenario device opens the device named by $VERBSLAB_IBDEV (default: the first one), so two scenario
 * devices talk through one real device in loopback, like two ports of Soft-RoCE. */
__attribute__((unused)) static struct ibv_context *open_device(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    const char *want = getenv("VERBSLAB_IBDEV");
    struct ibv_context *ctx = NULL;
    if (!list) return NULL;
    for (int i = 0; i < n && !ctx; i++)
        if (!want || !strcmp(ibv_get_device_name(list[i]), want)) ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    return ctx;
}

/* GID index of the RoCE v2 address to use ($VERBSLAB_GID_INDEX, default 1 as on Soft-RoCE). */
__attribute__((unused)) static int gid_index(void)
{
    const char *s = getenv("VERBSLAB_GID_INDEX");
    return s ? atoi(s) : 1;
}

/* Poll until n completions arrived or about two seconds passed; returns how many were polled. */
__attribute__((unused)) static int poll_cq_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int max)
{
    int got = 0;
    for (int spin = 0; spin < 2000 && got < n; spin++) {
        int r = ibv_poll_cq(cq, max - got, wc + got);
        if (r < 0) return r;
        got += r;
        if (got < n) poll(NULL, 0, 1);
    }
    if (got < max) { int r = ibv_poll_cq(cq, max - got, wc + got); if (r > 0) got += r; }
    return got;
}

/* Wait up to two seconds for an async event of the given type; acknowledges every event read. */
__attribute__((unused)) static int expect_async(struct ibv_context *ctx, enum ibv_event_type type)
{
    struct ibv_async_event ev;
    struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
    int fl = fcntl(ctx->async_fd, F_GETFL);
    fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
    for (int i = 0; i < 20; i++) {
        if (poll(&p, 1, 100) <= 0) continue;
        if (ibv_get_async_event(ctx, &ev)) continue;
        enum ibv_event_type t = ev.event_type;
        ibv_ack_async_event(&ev);
        if (t == type) return 1;
    }
    return 0;
}

/* Wait up to two seconds for a completion event on a channel; returns 0 and the CQ, or -1 (EAGAIN). */
__attribute__((unused)) static int get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq)
{
    void *cq_ctx;
    struct pollfd p = { .fd = ch->fd, .events = POLLIN };
    int fl = fcntl(ch->fd, F_GETFL);
    fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
    if (poll(&p, 1, 2000) <= 0) { errno = EAGAIN; return -1; }
    return ibv_get_cq_event(ch, cq, &cq_ctx);
}

/* RESET -> INIT -> RTR -> RTS with rc_pingpong's attributes (PSN 0), like the console's "connect". */
__attribute__((unused)) static int modify_to_rts(struct ibv_qp *qp, struct ibv_context *peer_ctx, uint32_t peer_qpn,
                                                 int access, enum ibv_mtu mtu)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr init;
    if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init)) return errno;
    int ud = init.qp_type == IBV_QPT_UD, rcq = init.qp_type == IBV_QPT_RC;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT; a.pkey_index = 0; a.port_num = 1;
    if (ud) a.qkey = 0x11111111; else a.qp_access_flags = access;
    int r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
    if (r) return r;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    int mask = IBV_QP_STATE;
    if (!ud) {
        a.path_mtu = mtu; a.dest_qp_num = peer_qpn; a.rq_psn = 0;
        a.ah_attr.is_global = 1; a.ah_attr.port_num = 1; a.ah_attr.grh.hop_limit = 1; a.ah_attr.grh.sgid_index = gid_index();
        if (ibv_query_gid(peer_ctx, 1, gid_index(), &a.ah_attr.grh.dgid)) return errno;
        mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
        if (rcq) { a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12; mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER; }
    }
    r = ibv_modify_qp(qp, &a, mask);
    if (r) return r;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS; a.sq_psn = 0;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (rcq) { a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.max_rd_atomic = 1;
               mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC; }
    return ibv_modify_qp(qp, &a, mask);
}

__attribute__((unused)) static void print_wcs(int step, const struct ibv_wc *wc, int n)
{
    for (int i = 0; i < n; i++)
        printf("     step %d: completion %d: %s (%d), opcode %d, byte_len %u, wr_id %llu, qp_num 0x%x, wc_flags 0x%x\n",
               step, i, ibv_wc_status_str(wc[i].status), (int)wc[i].status, (int)wc[i].opcode, wc[i].byte_len,
               (unsigned long long)wc[i].wr_id, wc[i].qp_num, (unsigned)wc[i].wc_flags);
}

__attribute__((unused)) static void dump(const char *what, uint64_t addr, size_t len)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
    printf("%s:", what);
    for (size_t i = 0; i < len; i++) printf(" %02x", p[i]);
    printf("\n");
}
`;

const WC_SOFT_OPCODES = new Set(['IB_WC_REG_MR']);

export interface ExportOptions { source?: string }

export function exportC(sc: Scenario, opts: ExportOptions = {}): string {
  const e = new Emitter(sc);
  // devices
  for (const d of sc.devices) e.declare(d.name, 'device');
  for (const d of sc.devices) {
    const o = e.objs.get(d.name)!;
    e.comment(`device "${d.name}" (software profile "${d.profile}"): the real device's capabilities decide what works`);
    e.line(`${o.c} = open_device();`);
    e.line(`CHECK(0, ${o.c} != NULL, ${cString(`open a device for ${d.name}`)});`);
  }
  e.line();
  sc.steps.forEach((st, i) => emitStep(e, st, i + 1));

  const head = [
    `/* Generated by Verbs Lab (verbslab export-c) from ${cComment(opts.source ?? 'a scenario')}`,
    ` * Scenario: ${cComment(sc.name)}`,
    ...cComment(sc.description || '').split('\n').filter(Boolean).map((l) => ` *   ${l}`),
    ` * Seed on the software device: ${sc.seed}`,
    ' *',
    ' * Build: cc -Wall -Werror -o scenario scenario.c -libverbs',
    ' * Run on a host with an RDMA device (for example Soft-RoCE: rdma link add rxe0 type rxe netdev eth0);',
    ' * $VERBSLAB_IBDEV picks the device, $VERBSLAB_GID_INDEX the RoCE v2 GID. Each expectation prints PASS or',
    ' * FAIL; the program stops at the first FAIL, like the headless runner. Steps the software device has but',
    ' * libibverbs does not (engine stepping, fault injection, kernel-only REG_MR, ...) are comments.',
    ' */',
  ];
  return [
    ...head,
    PREAMBLE,
    ...e.globals,
    '',
    'int main(void)',
    '{',
    ...e.lines,
    '    goto out;',
    'out:',
    '    printf("%d checks, %d failed\\n", checks, failures);',
    '    return failures ? 1 : 0;',
    '}',
    '',
  ].join('\n');
}

/** errno names the C library defines (anything else in a scenario is a software-device code). */
const C_ERRNO = new Set(['EPERM', 'ENOENT', 'EIO', 'ENXIO', 'E2BIG', 'EBADF', 'EAGAIN', 'ENOMEM', 'EACCES', 'EFAULT', 'EBUSY', 'EEXIST', 'ENODEV', 'EINVAL', 'ENOSPC', 'ERANGE', 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP', 'ETIMEDOUT', 'EPROTO', 'EOVERFLOW', 'EALREADY', 'ENOTCONN', 'EISCONN', 'ECONNREFUSED', 'ENOBUFS', 'EPROTONOSUPPORT']);

function emitStep(e: Emitter, st: Step, n: number) {
  const a = st.args as Record<string, unknown>;
  const ctx = new StepCtx(e);
  const body: string[] = [];
  const B = (s: string) => body.push(s);
  const ex = { ...(st.expect ?? {}) };
  if (ex.error && !C_ERRNO.has(ex.error)) {
    ctx.soft.push(`expected error ${ex.error} is a software-device code, not an errno`);
  }
  const what = (s: string) => cString(s);
  const notes: string[] = [];
  let expectErrHandled = false;
  /** pointer-returning verb */
  const ptrCall = (lhs: string, call: string, desc: string) => {
    B(`${lhs} = ${call};`);
    if (ex.error) {
      B(`CHECK(${n}, ${lhs} == NULL && errno == ${ex.error}, ${what(`${desc} fails with ${ex.error}`)});`);
      expectErrHandled = true;
    } else B(`CHECK(${n}, ${lhs} != NULL, ${what(desc)});`);
  };
  /** int-returning verb (0 or an errno value) */
  const intCall = (call: string, desc: string, errnoStyle = false) => {
    B(`rc = ${call};`);
    const got = errnoStyle ? '(rc ? errno : 0)' : 'rc';
    if (ex.error) {
      B(`CHECK(${n}, ${got} == ${ex.error}, ${what(`${desc} fails with ${ex.error}`)});`);
      expectErrHandled = true;
    } else B(`CHECK(${n}, rc == 0, ${what(desc)});`);
  };
  const newObj = (kind: Kind, extra: Partial<Obj> = {}) => {
    const name = st.as ?? `step${n}_${kind}`;
    return e.declare(name, kind, extra);
  };

  const soft = (why: string) => { notes.push(why); };

  switch (st.cmd) {
    case 'session.info': case 'device.list': case 'journal.get': case 'events.recent': case 'pcap.get': case 'session.reset':
      soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`);
      break;
    case 'engine.step': case 'engine.run':
      soft(`${st.cmd}: the software device's engine advances virtual time here; a real device runs by itself (the next poll waits for completions)`);
      break;
    case 'engine.traffic':
      soft(`${st.cmd}: the software device's load generator (poll the CQ, post the same WRs again while the send queue has room); on libibverbs that is your own loop around ibv_poll_cq and ibv_post_send, as in perftest's ib_write_bw`);
      break;
    case 'engine.faults':
      soft(`engine.faults ${JSON.stringify(a)}: fault injection on the software wire; not available on real hardware`);
      break;
    case 'engine.autorun':
      soft('engine.autorun: software engine timer; a real device runs by itself');
      break;
    case 'device.create': {
      const o = newObj('device');
      B(`${o.c} = open_device();`);
      B(`CHECK(${n}, ${o.c} != NULL, ${what(`open a device (software profile ${String(a.profile)})`)});`);
      break;
    }
    case 'device.destroy': intCall(`ibv_close_device(${ctx.h(a.device, 'device')})`, 'ibv_close_device', true); break;
    case 'pd.alloc': { const o = newObj('pd'); ptrCall(o.c, `ibv_alloc_pd(${ctx.h(a.device, 'device')})`, 'ibv_alloc_pd'); break; }
    case 'pd.dealloc': intCall(`ibv_dealloc_pd(${ctx.h(a.pd, 'pd')})`, 'ibv_dealloc_pd'); break;
    case 'buffer.alloc': {
      const o = newObj('buffer');
      B(`${o.c}_len = ${a.length};`);
      B(`CHECK(${n}, posix_memalign((void **)&${o.c}, 4096, ${o.c}_len) == 0, ${what(`posix_memalign ${a.length} bytes`)});`);
      B(`memset(${o.c}, 0, ${o.c}_len);`);
      break;
    }
    case 'buffer.free': B(`free(${ctx.h(a.buffer, 'buffer')});`); break;
    case 'memory.write': {
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
      break;
    }
    case 'memory.read': B(`dump(${what(`step ${n} memory`)}, ${ctx.n(a.addr)}, ${a.length});`); break;
    case 'mr.reg': {
      const o = newObj('mr');
      const acc = flags(a.access as string[]);
      const call = a.iova !== undefined
        ? `ibv_reg_mr_iova(${ctx.h(a.pd, 'pd')}, (void *)(uintptr_t)${ctx.n(a.addr)}, ${ctx.n(a.length)}, ${ctx.n(a.iova)}, ${acc})`
        : `ibv_reg_mr(${ctx.h(a.pd, 'pd')}, (void *)(uintptr_t)${ctx.n(a.addr)}, ${ctx.n(a.length)}, ${acc})`;
      ptrCall(o.c, call, `ibv_reg_mr access ${flags(a.access as string[], '0')}`);
      break;
    }
    case 'mr.rereg': {
      let fl: string[] = [];
      if (a.addr !== undefined || a.length !== undefined) fl.push('IBV_REREG_MR_CHANGE_TRANSLATION');
      if (a.pd !== undefined) fl.push('IBV_REREG_MR_CHANGE_PD');
      if (a.access !== undefined) fl.push('IBV_REREG_MR_CHANGE_ACCESS');
      const mr = ctx.h(a.mr, 'mr');
      intCall(`ibv_rereg_mr(${mr}, ${flags(fl)}, ${a.pd !== undefined ? ctx.h(a.pd, 'pd') : 'NULL'}, ${a.addr !== undefined ? `(void *)(uintptr_t)${ctx.n(a.addr)}` : 'NULL'}, ${a.length !== undefined ? ctx.n(a.length) : '0'}, ${flags(a.access as string[])})`, 'ibv_rereg_mr', true);
      fl = [];
      break;
    }
    case 'mr.dereg': intCall(`ibv_dereg_mr(${ctx.h(a.mr, 'mr')})`, 'ibv_dereg_mr'); break;
    case 'mr.alloc': {
      newObj('mr', { softwareOnly: 'kernel ib_alloc_mr: fast-registration MRs are not exposed by libibverbs' });
      soft(`mr.alloc ${JSON.stringify(a)}: kernel-only ib_alloc_mr(pd, IB_MR_TYPE_${a.indirect ? 'SG_GAPS' : 'MEM_REG'}, ${String(a.maxNumSg)}); user space has no fast-registration MR (mlx5 offers mlx5dv_create_mkey)`);
      break;
    }
    case 'mr.map_sg': soft('mr.map_sg: kernel-only ib_map_mr_sg() building the fast-registration page list'); break;
    case 'mw.alloc': {
      const o = newObj('mw', { mwType: a.type === 'IBV_MW_TYPE_2' ? 2 : 1 });
      ptrCall(o.c, `ibv_alloc_mw(${ctx.h(a.pd, 'pd')}, ${String(a.type)})`, `ibv_alloc_mw ${String(a.type)}`);
      if (!ex.error) B(`${o.c}_rkey = ${o.c}->rkey;`);
      break;
    }
    case 'mw.dealloc': intCall(`ibv_dealloc_mw(${ctx.h(a.mw, 'mw')})`, 'ibv_dealloc_mw'); break;
    case 'mw.bind': {
      B('{');
      B(`    struct ibv_mw_bind b = { .wr_id = ${u64Literal(a.wrId)}, .send_flags = ${flags(a.sendFlags as string[])},`);
      B(`        .bind_info = { .mr = ${ctx.h(a.mr, 'mr')}, .addr = ${ctx.n(a.addr)}, .length = ${ctx.n(a.length)}, .mw_access_flags = ${flags(a.access as string[])} } };`);
      B(`    rc = ibv_bind_mw(${ctx.h(a.qp, 'qp')}, ${ctx.h(a.mw, 'mw')}, &b);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_bind_mw fails with ${ex.error}`)});`); expectErrHandled = true; }
      else {
        B(`CHECK(${n}, rc == 0, ${what('ibv_bind_mw (the new rkey is in mw->rkey; the bind completes on the send CQ)')});`);
        B(`${ctx.h(a.mw, 'mw')}_rkey = ${ctx.h(a.mw, 'mw')}->rkey;`);
      }
      break;
    }
    case 'cq.create': {
      const dev = ctx.h(a.device, 'device');
      const o = newObj('cq', { device: String(a.device), channel: !!a.channel });
      if (a.channel) {
        B(`if (!${dev}_channel) ${dev}_channel = ibv_create_comp_channel(${dev});`);
        B(`CHECK(${n}, ${dev}_channel != NULL, ${what('ibv_create_comp_channel')});`);
      }
      ptrCall(o.c, `ibv_create_cq(${dev}, ${a.cqe}, NULL, ${a.channel ? `${dev}_channel` : 'NULL'}, 0)`, `ibv_create_cq cqe ${a.cqe}`);
      break;
    }
    case 'cq.destroy': intCall(`ibv_destroy_cq(${ctx.h(a.cq, 'cq')})`, 'ibv_destroy_cq'); break;
    case 'cq.req_notify': {
      if (a.reportMissedEvents) soft('reportMissedEvents: kernel IB_CQ_REPORT_MISSED_EVENTS (the arm call returns > 0 when completions may be waiting) has no libibverbs form; the plain arm is used and its "missed events" result is not checked');
      intCall(`ibv_req_notify_cq(${ctx.h(a.cq, 'cq')}, ${a.solicitedOnly ? 1 : 0})`, `ibv_req_notify_cq solicited_only=${a.solicitedOnly ? 1 : 0}`);
      break;
    }
    case 'cq.poll': emitPoll(e, ctx, st, n, B); expectErrHandled = true; break;
    case 'cq.get_event': {
      const dev = ctx.h(a.device, 'device');
      B('{');
      B('    struct ibv_cq *ev_cq = NULL;');
      B(`    rc = ${dev}_channel ? get_cq_event(${dev}_channel, &ev_cq) : (errno = EAGAIN, -1);`);
      if (ex.error) {
        B(`    CHECK(${n}, rc != 0, ${what(`no completion event (software device: ${ex.error}; libibverbs: the channel read would block, EAGAIN)`)});`);
        expectErrHandled = true;
      } else B(`    CHECK(${n}, rc == 0, ${what('ibv_get_cq_event')});`);
      if (isObj(ex.result) && typeof ex.result.cq === 'string') {
        const cq = e.handle(ex.result.cq, 'cq');
        if (!cq.soft) B(`    CHECK(${n}, ev_cq == ${cq.expr}, ${what(`the event is for ${ex.result.cq}`)});`);
      }
      B('    (void)ev_cq;');
      B('}');
      break;
    }
    case 'cq.ack_events': B(`ibv_ack_cq_events(${ctx.h(a.cq, 'cq')}, ${a.n});`); break;
    case 'srq.create': {
      const o = newObj('srq');
      B('{');
      B(`    struct ibv_srq_init_attr ia = { .attr = { .max_wr = ${a.maxWr}, .max_sge = ${a.maxSge}, .srq_limit = ${a.srqLimit} } };`);
      B(`    ${o.c} = ibv_create_srq(${ctx.h(a.pd, 'pd')}, &ia);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL && errno == ${ex.error}, ${what(`ibv_create_srq fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, ${o.c} != NULL, ${what('ibv_create_srq')});`);
      break;
    }
    case 'srq.modify':
      B('{');
      B(`    struct ibv_srq_attr sa = { .srq_limit = ${a.srqLimit} };`);
      B(`    rc = ibv_modify_srq(${ctx.h(a.srq, 'srq')}, &sa, IBV_SRQ_LIMIT);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_modify_srq fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, rc == 0, ${what(`ibv_modify_srq srq_limit=${a.srqLimit}`)});`);
      break;
    case 'srq.destroy': intCall(`ibv_destroy_srq(${ctx.h(a.srq, 'srq')})`, 'ibv_destroy_srq'); break;
    case 'srq.post_recv': case 'post.recv': {
      const wrs = a.wrs as { wrId: unknown; sgList: { addr: unknown; length: unknown; lkey: unknown }[] }[];
      B('{');
      B(`    struct ibv_recv_wr wr[${wrs.length}], *bad = NULL;`);
      B(`    struct ibv_sge sge[${Math.max(1, wrs.reduce((s, w) => s + w.sgList.length, 0))}];`);
      B('    memset(wr, 0, sizeof wr); memset(sge, 0, sizeof sge);');
      let k = 0;
      wrs.forEach((w, j) => {
        B(`    wr[${j}].wr_id = ${u64Literal(w.wrId)}; wr[${j}].num_sge = ${w.sgList.length}; wr[${j}].sg_list = &sge[${k}];${j + 1 < wrs.length ? ` wr[${j}].next = &wr[${j + 1}];` : ''}`);
        for (const g of w.sgList) { B(`    sge[${k}].addr = ${ctx.n(g.addr)}; sge[${k}].length = ${ctx.n(g.length)}; sge[${k}].lkey = ${ctx.n(g.lkey)};`); k++; }
      });
      B(st.cmd === 'post.recv' ? `    rc = ibv_post_recv(${ctx.h(a.qp, 'qp')}, wr, &bad);` : `    rc = ibv_post_srq_recv(${ctx.h(a.srq, 'srq')}, wr, &bad);`);
      B('    (void)bad;');
      B('}');
      const verb = st.cmd === 'post.recv' ? 'ibv_post_recv' : 'ibv_post_srq_recv';
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`${verb} fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, rc == 0, ${what(`${verb} ${wrs.length} WR(s)`)});`);
      break;
    }
    case 'qp.create': {
      const o = newObj('qp');
      const cap = a.cap as Record<string, number>;
      B('{');
      B(`    struct ibv_qp_init_attr ia = { .send_cq = ${ctx.h(a.sendCq, 'cq')}, .recv_cq = ${ctx.h(a.recvCq, 'cq')}, .srq = ${a.srq !== undefined ? ctx.h(a.srq, 'srq') : 'NULL'},`);
      B(`        .cap = { .max_send_wr = ${cap.maxSendWr}, .max_recv_wr = ${cap.maxRecvWr}, .max_send_sge = ${cap.maxSendSge}, .max_recv_sge = ${cap.maxRecvSge}, .max_inline_data = ${cap.maxInlineData} },`);
      B(`        .qp_type = ${String(a.qpType)}, .sq_sig_all = ${a.sqSigAll ? 1 : 0} };`);
      B(`    ${o.c} = ibv_create_qp(${ctx.h(a.pd, 'pd')}, &ia);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL && errno == ${ex.error}, ${what(`ibv_create_qp fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, ${o.c} != NULL, ${what(`ibv_create_qp ${String(a.qpType)}`)});`);
      break;
    }
    case 'qp.modify': {
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
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_modify_qp fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, rc == 0, ${what(`ibv_modify_qp ${at.qpState ? `to ${String(at.qpState)}` : ''}`)});`);
      break;
    }
    case 'qp.query':
      B('{');
      B('    struct ibv_qp_attr qa; struct ibv_qp_init_attr ia;');
      B(`    rc = ibv_query_qp(${ctx.h(a.qp, 'qp')}, &qa, IBV_QP_STATE, &ia);`);
      B(`    printf("step ${n}: QP state %d\\n", (int)qa.qp_state);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`ibv_query_qp fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, rc == 0, ${what('ibv_query_qp')});`);
      break;
    case 'qp.destroy': intCall(`ibv_destroy_qp(${ctx.h(a.qp, 'qp')})`, 'ibv_destroy_qp'); break;
    case 'qp.connect': {
      if (a.remote !== undefined) { soft('qp.connect to a remote host: the exported program has no other host to connect to'); break; }
      const q1 = e.objs.get(String(a.qp)), q2 = e.objs.get(String(a.peer));
      const qa = ctx.h(a.qp, 'qp'), qb = ctx.h(a.peer, 'qp');
      const devOf = (q?: Obj) => (q?.device ? e.objs.get(q.device)?.c : undefined);
      const da = devOf(q1), db = devOf(q2);
      if (!da || !db) ctx.soft.push('the QPs\' devices are unknown');
      const acc = flags(a.access as string[]);
      B(`rc = modify_to_rts(${qa}, ${db ?? 'NULL'}, ${qb}->qp_num, ${acc}, ${String(a.pathMtu)});`);
      if (a.qp !== a.peer) B(`if (!rc) rc = modify_to_rts(${qb}, ${da ?? 'NULL'}, ${qa}->qp_num, ${acc}, ${String(a.pathMtu)});`);
      if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`connect fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, rc == 0, ${what(`connect ${String(a.qp)} <-> ${String(a.peer)}: RESET->INIT->RTR->RTS`)});`);
      break;
    }
    case 'ah.create': {
      const o = newObj('ah');
      B('{');
      B(`    struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .sgid_index = ${a.sgidIndex}, .hop_limit = 1 } };`);
      B(`    ibv_query_gid(${ctx.h(a.destDevice, 'device')}, 1, ${a.sgidIndex}, &aa.grh.dgid);`);
      B(`    ${o.c} = ibv_create_ah(${ctx.h(a.pd, 'pd')}, &aa);`);
      B('}');
      if (ex.error) { B(`CHECK(${n}, ${o.c} == NULL, ${what(`ibv_create_ah fails with ${ex.error}`)});`); expectErrHandled = true; }
      else B(`CHECK(${n}, ${o.c} != NULL, ${what('ibv_create_ah')});`);
      break;
    }
    case 'post.send': emitPostSend(e, ctx, st, n, B); expectErrHandled = true; break;
    default:
      soft(`${st.cmd}: no libibverbs equivalent`);
  }

  if (ctx.soft.length && st.as && e.objs.get(st.as) && !e.objs.get(st.as)!.softwareOnly) {
    e.objs.get(st.as)!.softwareOnly = 'created by a step libibverbs cannot express';
  }
  // the step's devices for cq objects (qp.create: remember the device of its PD for qp.connect)
  if (st.cmd === 'qp.create' && st.as) {
    const cqObj = e.objs.get(String(a.sendCq));
    const o = e.objs.get(st.as);
    if (o && cqObj?.device) o.device = cqObj.device;
  }

  // expectations checked after the verb
  if (ex.error && !expectErrHandled && !ctx.soft.length) {
    ctx.soft.push(`the software device fails this step with ${ex.error}, but the libibverbs call reports no error, so it is not performed`);
  }
  for (const q of ex.qpState ?? []) {
    const h = e.handle(q.qp, 'qp');
    if (h.soft) { notes.push(`qpState ${q.qp}: ${h.soft}`); continue; }
    B('{');
    B('    struct ibv_qp_attr qa; struct ibv_qp_init_attr ia;');
    B(`    rc = ibv_query_qp(${h.expr}, &qa, IBV_QP_STATE, &ia);`);
    B(`    CHECK(${n}, rc == 0 && qa.qp_state == ${q.state}, ${what(`${q.qp} is in ${q.state}`)});`);
    B('}');
  }
  for (const b of ex.bytes ?? []) {
    const addr = ctx.n(b.addr);
    const bytes = b.hex.match(/../g) ?? [];
    const arr = `expect_${n}_${e.tmp++}`;
    e.global(`static const uint8_t ${arr}[${bytes.length}] = { ${bytes.map((x) => `0x${x.toLowerCase()}`).join(', ')} };`);
    B(`CHECK(${n}, memcmp((const void *)(uintptr_t)${addr}, ${arr}, ${bytes.length}) == 0, ${what(`${bytes.length} bytes at ${typeof b.addr === 'string' ? b.addr : `0x${b.addr.toString(16)}`} are ${b.hex.length > 32 ? `${b.hex.slice(0, 32)}...` : b.hex}`)});`);
  }
  for (const ae of ex.asyncEvent ?? []) {
    const devName = ae.obj ? (e.objs.get(ae.obj)?.kind === 'device' ? ae.obj : e.objs.get(ae.obj)?.device) : e.sc.devices[0]?.name;
    const dev = devName ? e.objs.get(devName)?.c : undefined;
    if (!dev) { notes.push(`async event ${ae.type}: its device is unknown here`); continue; }
    B(`CHECK(${n}, expect_async(${dev}, ${ae.type}), ${what(`async event ${ae.type}${ae.obj ? ` on ${ae.obj}` : ''}`)});`);
  }
  for (const p of ex.packet ?? []) notes.push(`wire (not observable through libibverbs; capture with tshark on the RoCE interface): expect ${p.count ?? `at least ${p.min ?? 1}`} ${p.opcode}${p.syndrome ? ` ${p.syndrome}` : ''} packet(s)${p.from ? ` from ${p.from}` : ''}`);
  for (const k of ex.keyState ?? []) notes.push(`key state (software device only): ${k.key} is ${k.state}`);
  if (ex.result && st.cmd !== 'cq.get_event') notes.push(`result check (software device): ${JSON.stringify(ex.result)}`);

  // write the step
  e.line(`/* ---- step ${n}: ${cComment(st.cmd)}${st.note ? ` -- ${cComment(st.note)}` : ''} */`);
  if (ctx.soft.length) {
    e.comment(`not expressible with libibverbs: ${[...new Set(ctx.soft)].join('; ')}`);
    e.comment(`software-device step: ${st.cmd} ${JSON.stringify(st.args)}`);
    // objects this step would create stay NULL
  } else {
    for (const l of body) e.line(l);
  }
  for (const nt of notes) e.comment(nt);
  e.line();
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function emitPoll(e: Emitter, ctx: StepCtx, st: Step, n: number, B: (s: string) => void) {
  const a = st.args as { cq: unknown; max: number };
  const cq = ctx.h(a.cq, 'cq');
  const wc = st.expect?.wc;
  const max = Math.min(a.max, 4096);
  if (!wc) {
    B(`rc = ibv_poll_cq(${cq}, ${max}, wcs);`);
    B(`CHECK(${n}, rc >= 0, ${what2('ibv_poll_cq')});`);
    return;
  }
  B(`rc = poll_cq_n(${cq}, wcs, ${wc.length}, ${Math.max(max, wc.length)});`);
  B(`print_wcs(${n}, wcs, rc);`);
  B(`CHECK(${n}, rc == ${wc.length}, ${what2(`ibv_poll_cq returns ${wc.length} completion(s)`)});`);
  wc.forEach((w, k) => {
    const x = `wcs[${k}]`;
    B(`CHECK(${n}, ${x}.status == ${w.status}, ${what2(`completion ${k}: status ${w.status}`)});`);
    if (w.opcode) {
      if (WC_SOFT_OPCODES.has(w.opcode)) B(`/* completion ${k}: opcode ${w.opcode} is kernel-only (IB_WC_REG_MR = 8); not compared */`);
      else B(`CHECK(${n}, ${x}.opcode == ${w.opcode}, ${what2(`completion ${k}: opcode ${w.opcode}`)});`);
    }
    const cmp = (field: string, v: unknown, label: string, conv = (s: string) => s) => {
      if (v === undefined) return;
      const r = e.num(v);
      if (r.soft) { B(`/* completion ${k}: ${cComment(label)} not compared: ${cComment(r.soft)} */`); return; }
      B(`CHECK(${n}, ${conv(`${x}.${field}`)} == ${r.expr}, ${what2(`completion ${k}: ${label} ${typeof v === 'string' ? v : String(v)}`)});`);
    };
    cmp('byte_len', w.byteLen, 'byte_len');
    cmp('wr_id', w.wrId, 'wr_id');
    cmp('imm_data', w.immData, 'imm_data', (s) => `be32toh(${s})`);
    cmp('invalidated_rkey', w.invalidatedRkey, 'invalidated_rkey');
    if (w.wcFlags) B(`CHECK(${n}, ${x}.wc_flags == (${flags(w.wcFlags)}), ${what2(`completion ${k}: wc_flags ${w.wcFlags.join('|') || '0'}`)});`);
    if (w.qp) {
      const q = e.handle(w.qp, 'qp');
      if (!q.soft) B(`CHECK(${n}, ${x}.qp_num == ${q.expr}->qp_num, ${what2(`completion ${k}: on ${w.qp}`)});`);
    }
  });
}
const what2 = (s: string) => cString(s);

function emitPostSend(e: Emitter, ctx: StepCtx, st: Step, n: number, B: (s: string) => void) {
  const a = st.args as { qp: unknown; wrs: Record<string, unknown>[] };
  const wrs = a.wrs;
  const ex = st.expect ?? {};
  const nsge = Math.max(1, wrs.reduce((s, w) => s + ((w.sgList as unknown[]) ?? []).length, 0));
  B('{');
  B(`    struct ibv_send_wr wr[${wrs.length}], *bad = NULL;`);
  B(`    struct ibv_sge sge[${nsge}];`);
  B('    memset(wr, 0, sizeof wr); memset(sge, 0, sizeof sge);');
  let k = 0;
  wrs.forEach((w, j) => {
    const op = String(w.opcode);
    const W = `wr[${j}]`;
    if (!(op in WrOpcode.values) || op === 'IB_WR_REG_MR') {
      ctx.soft.push(`${op} is the kernel-only IB_WR_REG_MR (fast registration through the send queue); user space has no equivalent`);
      return;
    }
    const sg = (w.sgList as { addr: unknown; length: unknown; lkey: unknown }[]) ?? [];
    const sf = ((w.sendFlags as string[]) ?? []).filter((f) => f in SendFlag.values);
    B(`    ${W}.wr_id = ${u64Literal(w.wrId)}; ${W}.opcode = ${op}; ${W}.send_flags = ${flags(sf)};${j + 1 < wrs.length ? ` ${W}.next = &wr[${j + 1}];` : ''}`);
    if (typeof w.inlineData === 'string') {
      const bytes = w.inlineData.match(/../g) ?? [];
      const arr = `inline_${n}_${j}`;
      e.global(`static uint8_t ${arr}[${Math.max(1, bytes.length)}] = { ${bytes.length ? bytes.map((b) => `0x${b}`).join(', ') : '0'} };`);
      B(`    sge[${k}].addr = (uint64_t)(uintptr_t)${arr}; sge[${k}].length = ${bytes.length}; sge[${k}].lkey = 0; /* inline: the lkey is not checked */`);
      B(`    ${W}.sg_list = &sge[${k}]; ${W}.num_sge = 1;`);
      k++;
    } else if (sg.length) {
      B(`    ${W}.sg_list = &sge[${k}]; ${W}.num_sge = ${sg.length};`);
      for (const g of sg) { B(`    sge[${k}].addr = ${ctx.n(g.addr)}; sge[${k}].length = ${ctx.n(g.length)}; sge[${k}].lkey = ${ctx.n(g.lkey)};`); k++; }
    }
    switch (op) {
      case 'IBV_WR_RDMA_WRITE': case 'IBV_WR_RDMA_WRITE_WITH_IMM': case 'IBV_WR_RDMA_READ':
        B(`    ${W}.wr.rdma.remote_addr = ${ctx.n(w.remoteAddr ?? 0)}; ${W}.wr.rdma.rkey = ${ctx.n(w.rkey ?? 0)};`);
        break;
      case 'IBV_WR_ATOMIC_CMP_AND_SWP': case 'IBV_WR_ATOMIC_FETCH_AND_ADD':
        B(`    ${W}.wr.atomic.remote_addr = ${ctx.n(w.remoteAddr ?? 0)}; ${W}.wr.atomic.rkey = ${ctx.n(w.rkey ?? 0)};`);
        B(`    ${W}.wr.atomic.compare_add = ${ctx.n(w.compareAdd ?? 0)}; ${W}.wr.atomic.swap = ${ctx.n(w.swap ?? 0)};`);
        break;
      case 'IBV_WR_BIND_MW': {
        e.global(`uint32_t wr_bind_rkey_${n}_${j};`);
        B(`    ${W}.bind_mw.mw = ${ctx.h(w.mw, 'mw')}; ${W}.bind_mw.rkey = wr_bind_rkey_${n}_${j} = ${ctx.n(w.bindRkey ?? 0)};`);
        B(`    ${W}.bind_mw.bind_info.mr = ${w.bindMr !== undefined ? ctx.h(w.bindMr, 'mr') : 'NULL'}; ${W}.bind_mw.bind_info.addr = ${ctx.n(w.bindAddr ?? 0)};`);
        B(`    ${W}.bind_mw.bind_info.length = ${ctx.n(w.bindLength ?? 0)}; ${W}.bind_mw.bind_info.mw_access_flags = ${flags(w.bindAccess as string[])};`);
        break;
      }
      default: break;
    }
    if (w.immData !== undefined && (op === 'IBV_WR_SEND_WITH_IMM' || op === 'IBV_WR_RDMA_WRITE_WITH_IMM')) B(`    ${W}.imm_data = htobe32(${ctx.n(w.immData)});`);
    const inv = w.invalidateRkey ?? (op === 'IBV_WR_LOCAL_INV' || op === 'IBV_WR_SEND_WITH_INV' ? w.immData : undefined);
    if (inv !== undefined) B(`    ${W}.invalidate_rkey = ${ctx.n(inv)};`);
    if (w.ah !== undefined) B(`    ${W}.wr.ud.ah = ${ctx.h(w.ah, 'ah')}; ${W}.wr.ud.remote_qpn = ${ctx.n(w.remoteQpn ?? 0)}; ${W}.wr.ud.remote_qkey = ${ctx.n(w.remoteQkey ?? 0)};`);
  });
  B(`    rc = ibv_post_send(${ctx.h(a.qp, 'qp')}, wr, &bad);`);
  B('    (void)bad;');
  B('}');
  if (ex.error) B(`CHECK(${n}, rc == ${ex.error}, ${cString(`ibv_post_send fails with ${ex.error}`)});`);
  else {
    B(`CHECK(${n}, rc == 0, ${cString(`ibv_post_send ${wrs.map((w) => String(w.opcode).replace(/^IBV_WR_/, '')).join(', ')}`)});`);
    wrs.forEach((w, j) => {
      if (w.opcode === 'IBV_WR_BIND_MW' && w.mw !== undefined) B(`${ctx.h(w.mw, 'mw')}_rkey = wr_bind_rkey_${n}_${j}; /* the window's rkey once the bind executes */`);
    });
  }
}

export const exportedAccessNames = Access.names;
export { CREATES, HANDLE_FIELDS };
