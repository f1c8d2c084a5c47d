// Loading and validating scenario files: size limit, JSON syntax (with line/column), schema (per step, with the
// step number, command and field), then names and references (every name defined before use, of the right kind;
// every reference naming a known field). Pure TypeScript, no Node imports (the GUI uses it too).
import { z } from 'zod';
import {
  CREATES, HANDLE_FIELDS, REF_FIELDS, REF_RE, SCENARIO_COMMANDS, SCENARIO_MAX_BYTES, SCENARIO_MAX_STEPS,
  ScenarioHeader, StepByCmd, parseRef, type ObjectKind, type Scenario, type Step,
} from '../protocol/scenario.ts';

export interface LoadError {
  message: string;          // one readable sentence: "step 4 (post.send) args.wrs.0.rkey: expected number, received string"
  step?: number;            // 1-based step number when the problem is inside a step
  cmd?: string;
  field?: string;           // dotted path inside the step ("args.wrs.0.rkey") or the file ("devices.0.profile")
  line?: number; column?: number;   // for JSON syntax errors
}
export type LoadResult = { ok: true; scenario: Scenario } | { ok: false; error: LoadError };

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/** Line and column (1-based) of a character offset. */
export function lineColumn(text: string, pos: number): { line: number; column: number } {
  let line = 1, col = 1;
  for (let i = 0; i < pos && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) { line++; col = 1; } else col++;
  }
  return { line, column: col };
}

export function parseScenarioText(text: string, file = 'scenario'): LoadResult {
  const size = utf8Length(text);
  if (size > SCENARIO_MAX_BYTES) {
    return { ok: false, error: { message: `${file}: too large (${size} bytes; the limit is ${SCENARIO_MAX_BYTES} bytes)` } };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    let pos = -1;
    const m = /position (\d+)/.exec(msg);
    if (m) pos = Number(m[1]);
    const lc = /line (\d+) column (\d+)/.exec(msg);
    let where: { line: number; column: number } | undefined;
    if (lc) where = { line: Number(lc[1]), column: Number(lc[2]) };
    else if (pos >= 0) where = lineColumn(text, pos);
    else if (/end of JSON input/i.test(msg)) where = lineColumn(text, text.length);
    const reason = msg.replace(/\s*(in JSON )?at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)$/, '');
    return {
      ok: false,
      error: { message: `${file}${where ? `:${where.line}:${where.column}` : ''}: not valid JSON: ${reason}`, ...where },
    };
  }
  return validateScenario(data, file);
}

/** Readable text for the first zod issue, choosing the most useful branch of unions. */
function describeIssue(issue: z.core.$ZodIssue, value: unknown): { path: (string | number)[]; message: string } {
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
  if (issue.code === 'invalid_union' && issue.errors && issue.errors.length) {
    const at = getAt(value, path);
    // a string starting with '$' is meant as a reference: report the reference branch; otherwise the first branch
    const branches = issue.errors.filter((b) => b.length);
    let pick = branches[0];
    if (typeof at === 'string' && at.startsWith('$')) pick = branches.find((b) => b.some((i) => i.code === 'invalid_format')) ?? pick;
    else pick = branches.find((b) => !b.some((i) => i.code === 'invalid_format' && 'pattern' in i && String(i.pattern) === String(REF_RE))) ?? pick;
    if (pick && pick[0]) {
      const inner = describeIssue(pick[0], at);
      return { path: [...path, ...inner.path], message: inner.message };
    }
  }
  if (issue.code === 'invalid_union' && 'note' in issue && issue.note === 'No matching discriminator') {
    return { path, message: issue.message };
  }
  const at = getAt(value, path);
  let message = issue.message.replace(/^Invalid input: /, '');
  if (at === undefined && /received undefined/.test(message)) message = `required field is missing (${message.replace(/, received undefined$/, '')})`;
  if (issue.code === 'invalid_format' && 'pattern' in issue && String(issue.pattern) === String(REF_RE) && typeof at === 'string' && !at.startsWith('$')) {
    message = `expected number (or a reference such as "$mrA.rkey"), received string ${JSON.stringify(at.slice(0, 40))}`;
  } else if (issue.code === 'unrecognized_keys') {
    message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    if (issue.keys.length === 1) return { path: [...path, issue.keys[0]!], message };
  }
  return { path, message };
}

function getAt(v: unknown, path: readonly (string | number)[]): unknown {
  let cur = v;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[p as string];
  }
  return cur;
}

const fmtPath = (p: readonly (string | number)[]) => p.map(String).join('.');

function closest(word: string, list: readonly string[]): string | undefined {
  let best: string | undefined, bestD = Infinity;
  for (const w of list) {
    const d = editDistance(word, w);
    if (d < bestD) { bestD = d; best = w; }
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!; dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

function stepError(i: number, cmd: string | undefined, field: string | undefined, msg: string): LoadResult {
  const where = `step ${i + 1}${cmd ? ` (${cmd})` : ''}${field ? ` ${field}` : ''}`;
  return { ok: false, error: { message: `${where}: ${msg}`, step: i + 1, cmd, field } };
}

/** Validate an already parsed scenario object. */
export function validateScenario(data: unknown, file = 'scenario'): LoadResult {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, error: { message: `${file}: a scenario is a JSON object with "verbslab": "scenario"` } };
  }
  const { steps, ...header } = data as Record<string, unknown>;
  const h = ScenarioHeader.safeParse(header);
  if (!h.success) {
    const d = describeIssue(h.error.issues[0]!, header);
    const field = fmtPath(d.path);
    return { ok: false, error: { message: `${file}${field ? ` ${field}` : ''}: ${d.message}`, field: field || undefined } };
  }
  if (!Array.isArray(steps)) return { ok: false, error: { message: `${file} steps: expected an array of steps`, field: 'steps' } };
  if (steps.length > SCENARIO_MAX_STEPS) {
    return { ok: false, error: { message: `${file} steps: too many steps (${steps.length}; the limit is ${SCENARIO_MAX_STEPS})`, field: 'steps' } };
  }
  const devNames = new Set<string>();
  for (const [k, d] of h.data.devices.entries()) {
    if (devNames.has(d.name)) return { ok: false, error: { message: `${file} devices.${k}.name: "${d.name}" is declared twice`, field: `devices.${k}.name` } };
    devNames.add(d.name);
  }
  const parsed: Step[] = [];
  for (let i = 0; i < steps.length; i++) {
    const raw = steps[i];
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return stepError(i, undefined, undefined, 'expected an object {"cmd": ..., "args": {...}}');
    const cmd = (raw as { cmd?: unknown }).cmd;
    if (typeof cmd !== 'string') return stepError(i, undefined, 'cmd', 'expected a command name (string)');
    // own keys only: "toString" or "__proto__" must not find Object.prototype's members
    const schema = Object.hasOwn(StepByCmd, cmd) ? StepByCmd[cmd] : undefined;
    if (!schema) {
      const near = closest(cmd, SCENARIO_COMMANDS);
      return stepError(i, undefined, 'cmd', `unknown command ${JSON.stringify(cmd.slice(0, 64))}${near ? ` (did you mean "${near}"?)` : ''}`);
    }
    const r = schema.safeParse(raw);
    if (!r.success) {
      const d = describeIssue(r.error.issues[0]!, raw);
      const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more problem${r.error.issues.length > 2 ? 's' : ''})` : '';
      return stepError(i, cmd, fmtPath(d.path) || undefined, d.message + more);
    }
    parsed.push(r.data as Step);
  }
  const scenario: Scenario = { ...h.data, steps: parsed };
  const names = checkNames(scenario);
  if (!names.ok) return names;
  return { ok: true, scenario };
}

interface Sym { kind: ObjectKind; step: number }

/** Names and references: defined before use, of the right kind, naming known fields. */
export function checkNames(sc: Scenario): LoadResult {
  const syms = new Map<string, Sym>();
  for (const d of sc.devices) syms.set(d.name, { kind: 'device', step: 0 });
  for (let i = 0; i < sc.steps.length; i++) {
    const st = sc.steps[i]!;
    const err = (field: string, msg: string) => stepError(i, st.cmd, field, msg);
    const useName = (field: string, name: string, want: ObjectKind | ObjectKind[]): LoadResult | null => {
      const s = syms.get(name);
      if (!s) return err(field, `unknown name "${name}"${nearName(name, syms)} (names come from "devices" or an earlier step's "as")`);
      const wants = Array.isArray(want) ? want : [want];
      if (!wants.includes(s.kind)) return err(field, `"${name}" is a ${s.kind} (${s.step ? `step ${s.step}` : 'devices'}), expected a ${wants.join(' or ')}`);
      return null;
    };
    const useRef = (field: string, text: string): LoadResult | null => {
      const ref = parseRef(text);
      if (!ref) return err(field, `bad reference ${JSON.stringify(text.slice(0, 64))}: expected "$name.field" optionally followed by +N, -N or ^N`);
      const s = syms.get(ref.name);
      if (!s) return err(field, `reference ${text}: unknown name "${ref.name}"${nearName(ref.name, syms)}`);
      if (s.kind !== 'result') {
        const fields = REF_FIELDS[s.kind];
        if (!fields.includes(ref.field)) return err(field, `reference ${text}: a ${s.kind} has no field "${ref.field}" (fields: ${fields.join(', ')})`);
      }
      return null;
    };
    // walk args: handle names and references
    const walk = (v: unknown, path: string, key: string | undefined): LoadResult | null => {
      if (typeof v === 'string') {
        if (v.startsWith('$')) return useRef(path, v);
        if (key && HANDLE_FIELDS[key] && !(st.cmd === 'device.create')) return useName(path, v, HANDLE_FIELDS[key]);
        return null;
      }
      if (Array.isArray(v)) {
        for (let k = 0; k < v.length; k++) { const e = walk(v[k], `${path}.${k}`, undefined); if (e) return e; }
        return null;
      }
      if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) { const e = walk(x, `${path}.${k}`, k); if (e) return e; }
      }
      return null;
    };
    // capture: references resolved before the step runs, under a new name that the step's expectations can use
    if (st.capture) {
      for (const [f, ref] of Object.entries(st.capture.fields)) { const e = useRef(`capture.fields.${f}`, ref); if (e) return e; }
      const prev = syms.get(st.capture.as);
      if (prev) return err('capture.as', `"${st.capture.as}" is already defined (${prev.step ? `step ${prev.step}` : 'devices'})`);
      syms.set(st.capture.as, { kind: 'result', step: i + 1 });
    }
    const a = walk(st.args, 'args', undefined);
    if (a) return a;
    // the step's own name is visible to its expectations (e.g. keyState of the MR it registers)
    if (st.as) {
      const prev = syms.get(st.as);
      if (prev) return err('as', `"${st.as}" is already defined (${prev.step ? `step ${prev.step}` : 'devices'})`);
      syms.set(st.as, { kind: CREATES[st.cmd] ?? 'result', step: i + 1 });
    }
    const ex = st.expect;
    if (ex) {
      if (ex.wc && st.cmd !== 'cq.poll') return err('expect.wc', 'a "wc" expectation belongs on a cq.poll step');
      for (const [k, w] of (ex.wc ?? []).entries()) {
        if (w.qp) { const e = useName(`expect.wc.${k}.qp`, w.qp, 'qp'); if (e) return e; }
        for (const f of ['byteLen', 'wrId', 'immData', 'invalidatedRkey'] as const) {
          const v = w[f];
          if (typeof v === 'string' && v.startsWith('$')) { const e = useRef(`expect.wc.${k}.${f}`, v); if (e) return e; }
        }
      }
      for (const [k, b] of (ex.bytes ?? []).entries()) {
        if (typeof b.addr === 'string') { const e = useRef(`expect.bytes.${k}.addr`, b.addr); if (e) return e; }
      }
      for (const [k, e0] of (ex.asyncEvent ?? []).entries()) {
        if (e0.obj) { const e = useName(`expect.asyncEvent.${k}.obj`, e0.obj, ['qp', 'cq', 'srq', 'device']); if (e) return e; }
      }
      for (const [k, e0] of (ex.noAsyncEvent ?? []).entries()) {
        if (e0.obj) { const e = useName(`expect.noAsyncEvent.${k}.obj`, e0.obj, ['qp', 'cq', 'srq', 'device']); if (e) return e; }
      }
      for (const [k, e0] of (ex.keyState ?? []).entries()) {
        const e = useName(`expect.keyState.${k}.key`, e0.key, ['mr', 'mw']); if (e) return e;
      }
      for (const [k, e0] of (ex.qpState ?? []).entries()) {
        const e = useName(`expect.qpState.${k}.qp`, e0.qp, 'qp'); if (e) return e;
      }
      for (const [k, e0] of (ex.packet ?? []).entries()) {
        if (e0.from) { const e = useName(`expect.packet.${k}.from`, e0.from, 'device'); if (e) return e; }
      }
      if (ex.result) { const e = walk(ex.result, 'expect.result', undefined); if (e) return e; }
    }
  }
  return { ok: true, scenario: sc };
}

function nearName(name: string, syms: Map<string, Sym>): string {
  const n = closest(name, [...syms.keys()]);
  return n ? ` (did you mean "${n}"?)` : '';
}
