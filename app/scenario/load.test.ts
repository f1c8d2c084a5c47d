// Malformed scenario files are refused with a message that points at the step and the field; nothing throws.
import { describe, expect, it } from 'vitest';
import { parseScenarioText, validateScenario } from './load.ts';
import { SCENARIO_MAX_BYTES, parseRef } from '../protocol/scenario.ts';

const base = () => ({
  verbslab: 'scenario', version: 1, name: 't', seed: 7,
  devices: [{ name: 'dev0', profile: 'rxe' }, { name: 'dev1', profile: 'rxe' }],
  steps: [
    { cmd: 'pd.alloc', args: { device: 'dev0' }, as: 'pd0' },
    { cmd: 'buffer.alloc', args: { length: 4096 }, as: 'bufA' },
    { cmd: 'mr.reg', args: { pd: 'pd0', addr: '$bufA.addr', length: 4096, access: ['IBV_ACCESS_LOCAL_WRITE'] }, as: 'mrA' },
    { cmd: 'cq.create', args: { device: 'dev0', cqe: 16 }, as: 'cq0' },
    { cmd: 'qp.create', args: { pd: 'pd0', sendCq: 'cq0', recvCq: 'cq0', qpType: 'IBV_QPT_RC' }, as: 'qp0' },
    {
      cmd: 'post.send',
      args: { qp: 'qp0', wrs: [{ opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: '$bufA.addr+8', length: 8, lkey: '$mrA.lkey' }], remoteAddr: '$bufA.addr', rkey: '$mrA.rkey^0x01' }] },
    },
    { cmd: 'cq.poll', args: { cq: 'cq0' }, expect: { wc: [{ status: 'IBV_WC_SUCCESS', opcode: 'IBV_WC_RDMA_WRITE', byteLen: 8 }] } },
  ] as Record<string, unknown>[],
});
type S = ReturnType<typeof base>;
const refuse = (mut: (s: S) => void) => {
  const s = base(); mut(s);
  const r = parseScenarioText(JSON.stringify(s, null, 2), 'x.json');
  if (r.ok) throw new Error('accepted a malformed scenario');
  return r.error;
};
const args = (s: S, i: number) => s.steps[i]!.args as Record<string, unknown>;
const wr0 = (s: S) => (args(s, 5).wrs as Record<string, unknown>[])[0]!;

describe('scenario loader', () => {
  it('accepts the well-formed base scenario', () => {
    const r = parseScenarioText(JSON.stringify(base()), 'ok.json');
    expect(r.ok ? 'ok' : r.error.message).toBe('ok');
  });

  it('refuses bad JSON with line and column', () => {
    const r = parseScenarioText('{\n  "verbslab": "scenario",\n  "version": 1,,\n}', 'bad.json');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.line).toBe(3);
    expect(r.error.column).toBe(16);
    expect(r.error.message).toMatch(/^bad\.json:3:16: not valid JSON/);
    const t = parseScenarioText('{"verbslab": "scenario"', 'cut.json');
    expect(!t.ok && t.error.message).toMatch(/^cut\.json:1:\d+: not valid JSON/);
  });

  it('refuses a file that is too large before parsing it', () => {
    const big = `{"x": "${'a'.repeat(SCENARIO_MAX_BYTES)}"}`;
    const r = parseScenarioText(big, 'big.json');
    expect(!r.ok && r.error.message).toMatch(/big\.json: too large \(\d+ bytes; the limit is 4194304 bytes\)/);
  });

  it('refuses too many steps', () => {
    const e = refuse((s) => { s.steps = Array.from({ length: 10_001 }, () => ({ cmd: 'session.info', args: {} })); });
    expect(e.message).toMatch(/steps: too many steps \(10001; the limit is 10000\)/);
  });

  it('refuses an unknown command, naming the step and suggesting the closest command', () => {
    const e = refuse((s) => { s.steps[3]!.cmd = 'cq.craete'; });
    expect(e.message).toBe('step 4 cmd: unknown command "cq.craete" (did you mean "cq.create"?)');
    expect(e.step).toBe(4);
    expect(e.field).toBe('cmd');
  });

  it('refuses an unknown object name with step, command and field', () => {
    const e = refuse((s) => { args(s, 4).sendCq = 'cq9'; });
    expect(e.message).toMatch(/^step 5 \(qp\.create\) args\.sendCq: unknown name "cq9" \(did you mean "cq0"\?\)/);
    expect(e).toMatchObject({ step: 5, cmd: 'qp.create', field: 'args.sendCq' });
  });

  it('refuses a name of the wrong kind', () => {
    const e = refuse((s) => { args(s, 2).pd = 'bufA'; });
    expect(e.message).toBe('step 3 (mr.reg) args.pd: "bufA" is a buffer (step 2), expected a pd');
  });

  it('refuses a name used before the step that defines it', () => {
    const e = refuse((s) => { s.steps.splice(0, 0, { cmd: 'pd.dealloc', args: { pd: 'pd0' } }); });
    expect(e.message).toMatch(/^step 1 \(pd\.dealloc\) args\.pd: unknown name "pd0"/);
  });

  it('refuses wrong types deep inside a work request', () => {
    const e = refuse((s) => { wr0(s).rkey = 'abc'; });
    expect(e.message).toBe('step 6 (post.send) args.wrs.0.rkey: expected number (or a reference such as "$mrA.rkey"), received string "abc"');
    const e2 = refuse((s) => { wr0(s).rkey = true; });
    expect(e2.field).toBe('args.wrs.0.rkey');
    expect(e2.message).toMatch(/expected number, received boolean/);
    const e3 = refuse((s) => { wr0(s).rkey = 2 ** 32; });
    expect(e3.message).toMatch(/^step 6 \(post\.send\) args\.wrs\.0\.rkey: Too big/);
  });

  it('refuses unknown fields and enum names', () => {
    expect(refuse((s) => { wr0(s).rKey = 1; }).message).toBe('step 6 (post.send) args.wrs.0.rKey: unknown field "rKey"');
    expect(refuse((s) => { wr0(s).opcode = 'IBV_WR_RDMA_WRIT'; }).field).toBe('args.wrs.0.opcode');
    expect(refuse((s) => { s.steps[6]!.expect = { wc: [{ status: 'IBV_WC_OK' }] }; }).field).toBe('expect.wc.0.status');
    expect(refuse((s) => { s.steps[6]!.expect = { wcs: [] }; }).message).toBe('step 7 (cq.poll) expect.wcs: unknown field "wcs"');
  });

  it('a step without args gets {} and is checked like one', () => {
    expect(refuse((s) => { delete s.steps[0]!.args; }).message).toMatch(/^step 1 \(pd\.alloc\) args\.device: required field is missing/);
    const s = base(); s.steps.push({ cmd: 'engine.run' });
    const r = parseScenarioText(JSON.stringify(s), 'x.json');
    expect(r.ok && r.scenario.steps[7]!.args).toEqual({ maxSteps: 1_000_000 });
  });

  it('refuses missing required fields', () => {
    const e = refuse((s) => { delete args(s, 2).access; });
    expect(e.field).toBe('args.access');
    expect(e.message).toMatch(/^step 3 \(mr\.reg\) args\.access: required field is missing/);
  });

  it('validates references: syntax, defined name, known field', () => {
    expect(refuse((s) => { wr0(s).rkey = '$mrA'; }).message).toMatch(/^step 6 \(post\.send\) args\.wrs\.0\.rkey: a reference "\$name\.field"/);
    expect(refuse((s) => { wr0(s).rkey = '$mrB.rkey'; }).message).toBe('step 6 (post.send) args.wrs.0.rkey: reference $mrB.rkey: unknown name "mrB" (did you mean "mrA"?)');
    expect(refuse((s) => { wr0(s).rkey = '$mrA.rkye'; }).message).toBe('step 6 (post.send) args.wrs.0.rkey: reference $mrA.rkye: a mr has no field "rkye" (fields: handle, lkey, rkey, addr, length, iova)');
    expect(refuse((s) => { wr0(s).rkey = '$mrA.rkey*2'; }).field).toBe('args.wrs.0.rkey');
    expect(refuse((s) => { args(s, 1).length = '$bufA.length'; }).message).toMatch(/reference \$bufA\.length: unknown name "bufA"/);
  });

  it('refuses expectations in the wrong place or naming the wrong kind', () => {
    expect(refuse((s) => { s.steps[5]!.expect = { wc: [] }; }).message).toBe('step 6 (post.send) expect.wc: a "wc" expectation belongs on a cq.poll step');
    expect(refuse((s) => { s.steps[6]!.expect = { qpState: [{ qp: 'cq0', state: 'IBV_QPS_ERR' }] }; }).message).toBe('step 7 (cq.poll) expect.qpState.0.qp: "cq0" is a cq (step 4), expected a qp');
    expect(refuse((s) => { s.steps[6]!.expect = { keyState: [{ key: 'pd0', state: 'free' }] }; }).field).toBe('expect.keyState.0.key');
    expect(refuse((s) => { s.steps[6]!.expect = { error: 'einval' }; }).field).toBe('expect.error');
  });

  it('refuses duplicate names and bad headers', () => {
    expect(refuse((s) => { s.steps[1]!.as = 'pd0'; }).message).toBe('step 2 (buffer.alloc) as: "pd0" is already defined (step 1)');
    expect(refuse((s) => { s.steps[1]!.as = 'dev1'; }).message).toBe('step 2 (buffer.alloc) as: "dev1" is already defined (devices)');
    expect(refuse((s) => { (s as Record<string, unknown>).version = 2; }).message).toBe('x.json version: expected 1');
    expect(refuse((s) => { s.devices[1]!.name = 'dev0'; }).message).toBe('x.json devices.1.name: "dev0" is declared twice');
    expect(refuse((s) => { (s as Record<string, unknown>).steps = {}; }).field).toBe('steps');
    expect(refuse((s) => { s.steps[2] = 5 as never; }).message).toMatch(/^step 3: expected an object/);
  });

  it('never throws on arbitrary JSON values', () => {
    for (const v of [null, 1, 'x', [], {}, { steps: [null] }, { verbslab: 'scenario', version: 1, name: 'n', devices: [{ name: 'd', profile: 'rxe' }], steps: [{ cmd: {} }, 1] }]) {
      expect(validateScenario(v).ok).toBe(false);
    }
  });

  it('parses references exactly', () => {
    expect(parseRef('$mrA.rkey')).toEqual({ name: 'mrA', field: 'rkey' });
    expect(parseRef('$bufA.addr+0x40')).toEqual({ name: 'bufA', field: 'addr', op: '+', operand: 64n });
    expect(parseRef('$mw_1.rkey^1')).toEqual({ name: 'mw_1', field: 'rkey', op: '^', operand: 1n });
    for (const bad of ['mrA.rkey', '$mrA', '$1a.rkey', '$mrA.rkey+', '$mrA.rkey + 1', '$mrA.rkey*2', '$mrA.r_key']) expect(parseRef(bad)).toBeNull();
  });
});
