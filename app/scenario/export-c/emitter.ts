// The machinery of the C export (app/scenario/export-c.ts): C literals, the emitter that declares the objects of a
// scenario as C globals and turns handle positions and references into C expressions, and the step context each
// command's C emitter (the `*C` tables next to the descriptors in app/protocol/commands/*.ts) writes through.
// No Node imports: the descriptor files import it.
import { QpAttrMask, SendFlag, WrOpcode } from '../../protocol/enums.ts';
import { parseRef } from '../../protocol/ref.ts';
import type { ObjectKind, Scenario, Step, Expect } from '../../protocol/scenario.ts';
import type { CommandName } from '../../protocol/commands.ts';

export type Kind = Exclude<ObjectKind, 'result'>;
export interface Obj { kind: Kind | 'result'; c: string; device?: string; softwareOnly?: string; mwType?: number; channel?: boolean }

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

export const flags = (names: readonly string[] | undefined, zero = '0') => (names && names.length ? names.join(' | ') : zero);

export function u64Literal(v: unknown): string {
  if (typeof v === 'number') return v > 0xffffffff ? `0x${v.toString(16)}ULL` : String(v);
  if (typeof v === 'string') {
    const b = BigInt(v);
    return `0x${b.toString(16)}ULL`;
  }
  return '0';
}

export class Emitter {
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
export class StepCtx {
  soft: string[] = [];
  constructor(readonly e: Emitter) {}
  h(v: unknown, want: Kind): string { const r = this.e.handle(v, want); if (r.soft) this.soft.push(r.soft); return r.expr; }
  n(v: unknown): string { const r = this.e.num(v); if (r.soft) this.soft.push(r.soft); return r.expr; }
}

export const C_ERRNO = new Set(['EPERM', 'ENOENT', 'EIO', 'ENXIO', 'E2BIG', 'EBADF', 'EAGAIN', 'ENOMEM', 'EACCES', 'EFAULT', 'EBUSY', 'EEXIST', 'ENODEV', 'EINVAL', 'ENOSPC', 'ERANGE', 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP', 'ETIMEDOUT', 'EPROTO', 'EOVERFLOW', 'EALREADY', 'ENOTCONN', 'EISCONN', 'ECONNREFUSED', 'ENOBUFS', 'EPROTONOSUPPORT']);
const WC_SOFT_OPCODES = new Set(['IB_WC_REG_MR']);

/** What a command's C emitter gets for one scenario step. */
export interface StepEmit {
  e: Emitter;
  st: Step;
  /** the step number (1-based), as the program's PASS/FAIL lines print it */
  n: number;
  a: Record<string, unknown>;
  ex: Expect;
  ctx: StepCtx;
  /** one line of the step's C body */
  B(line: string): void;
  /** a C string literal */
  what(s: string): string;
  /** a pointer-returning verb: assign, then check (or check the expected errno) */
  ptrCall(lhs: string, call: string, desc: string): void;
  /** an int-returning verb (0 or an errno value; errnoStyle: -1 and errno) */
  intCall(call: string, desc: string, errnoStyle?: boolean): void;
  /** declare the object the step creates (named by its "as") */
  newObj(kind: Kind, extra?: Partial<Obj>): Obj;
  /** a note written as a comment after the step (the step has nothing to do on libibverbs) */
  soft(why: string): void;
  /** the emitter checked the step's expected error itself */
  handled(): void;
}
/** A command's C emitter. */
export type CEmit = (s: StepEmit) => void;
/** The C emitters of one domain's descriptor table (every step command of the domain has one). */
export type CExport<T> = { [N in keyof T & CommandName]: CEmit };

export const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function emitPoll(e: Emitter, ctx: StepCtx, st: Step, n: number, B: (s: string) => void) {
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

export function emitPostSend(e: Emitter, ctx: StepCtx, st: Step, n: number, B: (s: string) => void) {
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
    if (!(op in WrOpcode.values) || op.startsWith('IB_WR_')) {
      ctx.soft.push(op === 'IB_WR_REG_MR'
        ? `${op} is the kernel-only IB_WR_REG_MR (fast registration through the send queue); user space has no equivalent`
        : `${op} is kernel-only (iWARP RDMA READ with invalidate, include/rdma/ib_verbs.h); libibverbs has no IBV_WR_ for it`);
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

/** post.recv and srq.post_recv: ibv_post_recv / ibv_post_srq_recv with the scenario's receive WRs */
export function emitPostRecv({ st, n, a, ex, ctx, B, what, handled }: StepEmit): void {
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
  if (ex.error) { B(`CHECK(${n}, rc == ${ex.error}, ${what(`${verb} fails with ${ex.error}`)});`); handled(); }
  else B(`CHECK(${n}, rc == 0, ${what(`${verb} ${wrs.length} WR(s)`)});`);
}
