// The software target with the device's offload backend (labs/nvmf/offload.ts) under the same host driver: the admin
// queue is served by software from the NVMF SRQ, the I/O queue's Connect too; after ibv_qp_set_nvmf the device serves
// READ / WRITE / FLUSH on the same QP and CQ (every byte verified by the host against what it wrote, and on the soft
// SSD's medium), the target software handles no completion for them, and a non-offloaded admin command is still
// answered by software.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExecutor, type NativeExecutor } from '../../app/host/executor.ts';
import { NvmfStep } from './enums.ts';
import { DEFAULT_FABRIC, NvmfFabric } from './fabric.ts';
import { attachOffload, enableOffload, offloadFault, watchDevice, type OffloadBackend } from './offload.ts';
import { CC, Cns, Prop } from './spec.ts';

let x: NativeExecutor;
let f: NvmfFabric;
let be: OffloadBackend;
const cfg = { ...DEFAULT_FABRIC, queueDepth: 32, blocks: 2048 };
const dev = (name: string) => { const r = x.exec({ cmd: 'device.create', args: { profile: 'cx', name } }); if (!r.ok) throw new Error(r.error.message); return (r.result as { device: number }).device; };
const CC_ENABLE = BigInt(CC.EN | (6 << CC.IOSQES_SHIFT) | (4 << CC.IOCQES_SHIFT));
const step = (a: number) => NvmfStep.names.find((n) => NvmfStep.values[n] === a);

function q(qid: number, depth: number) { const r = f.addQueue(qid, depth); if (!('host' in r)) throw new Error('rejected'); return r; }
function bringUp() {
  q(0, 32);
  expect(f.run(0, { op: 'connect', qid: 0, sqsize: 31, kato: 5000, subnqn: cfg.subnqn, hostnqn: cfg.hostnqn }).done!.cqe.status).toBe(0);
  expect(f.run(0, { op: 'property-set', offset: Prop.CC, value: CC_ENABLE }).done!.cqe.status).toBe(0);
  q(1, 32);
  expect(f.run(1, { op: 'connect', qid: 1, sqsize: 31, kato: 0, cntlid: 1, subnqn: cfg.subnqn, hostnqn: cfg.hostnqn }).done!.cqe.status).toBe(0);
}

beforeEach(() => { x = createExecutor({ seed: 7 }); f = new NvmfFabric(x, dev('target'), dev('host'), cfg); be = attachOffload(f); });
afterEach(() => x.close());

describe('offload backend under the software target', () => {
  it('Connect and admin by software from the SRQ; READ / WRITE / FLUSH by the device after enable, every byte verified', () => {
    bringUp();
    const capsules = f.target.counters.capsules;
    expect(capsules).toBe(3);   // both Connects and the Property Set reached software through the SRQ
    enableOffload(f, 1);
    x.drainEvents();
    const sw = f.target.counters.softwareSteps;
    const w = f.run(1, { op: 'write', nsid: 1, slba: 8n, nlb: 8, sgl: 'keyed' }).done!;
    expect(w.cqe.status).toBe(0);
    const r = f.run(1, { op: 'read', nsid: 1, slba: 8n, nlb: 8, sgl: 'keyed' }).done!;
    expect([r.cqe.status, r.verified]).toEqual([0, true]);
    expect(f.run(1, { op: 'flush', nsid: 1 }).done!.cqe.status).toBe(0);
    // the device did it: the typed Offload steps for each CID end in DONE, software handled no completion
    const evs = x.drainEvents().filter((e) => e.kind === 'Offload');
    for (const cid of [w.cid, r.cid]) expect(evs.filter((e) => e.b === cid).map((e) => step(e.a)).at(-1)).toBe('DONE');
    expect(evs.some((e) => step(e.a) === 'RDMA_WRITE' && e.b === r.cid)).toBe(true);
    expect(f.target.counters.softwareSteps).toBe(sw);
    expect(f.target.counters.capsules).toBe(capsules);
    // the bytes are on the soft SSD's medium, and the host compared every byte it read back
    const host = f.host.expected(8n, 8);
    const peek = x.exec({ cmd: 'nvme.peek', args: { nvme: be.nvme, nsid: 1, slba: 8, nlb: 8 } });
    expect(peek.ok && (peek.result as { hex: string }).hex).toBe(Buffer.from(host).toString('hex'));
    expect(f.host.counters.verifiedBytes).toBe(8 * 512);
    // a non-offloaded admin command is still the software target's
    const id = f.run(0, { op: 'identify', cns: Cns.CONTROLLER, nsid: 0 }).done!;
    expect(id.cqe.status).toBe(0);
    expect(f.target.counters.capsules).toBe(capsules + 1);
  });

  it('the device\'s steps of an offloaded READ become device rows of its flow, in time order with the host\'s', () => {
    bringUp();
    enableOffload(f, 1);
    watchDevice(f);
    expect(f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 8, sgl: 'keyed' }).done!.cqe.status).toBe(0);
    const r = f.run(1, { op: 'read', nsid: 1, slba: 0n, nlb: 8, sgl: 'keyed' });
    const rows = f.flow.since(r.flowFrom).filter((x) => x.qid === 1 && x.cid === r.cid);
    expect(rows.filter((x) => x.owner === 'device').map((x) => x.stage)).toEqual(['RECV', 'PARSE', 'STAGING_ALLOC', 'SQE_WRITE', 'SQ_DOORBELL', 'CQE', 'CQ_DOORBELL', 'RDMA_WRITE', 'SEND_RESPONSE', 'DONE']);
    expect(rows.some((x) => x.owner === 'software')).toBe(false);
    expect(rows.filter((x) => x.owner === 'device').every((x) => x.detail!.endsWith('(modelled)'))).toBe(true);
    expect(rows.find((x) => x.stage === 'RDMA_WRITE')!.verb).toBe('IBV_WR_RDMA_WRITE');
    const ts = rows.map((x) => x.t);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    expect(rows[0]!.owner).toBe('host');
  });

  it('queue depth 32 offloaded: 64 WRITEs then 256 READs, all verified, no software step', () => {
    bringUp();
    enableOffload(f, 1);
    const sw = f.target.counters.softwareSteps;
    const w = f.runMany(1, 64, 32, (i) => ({ op: 'write', nsid: 1, slba: BigInt(i * 8), nlb: 8, sgl: 'keyed' }));
    expect(w.length).toBe(64);
    expect(w.every((d) => d.cqe.status === 0)).toBe(true);
    const r = f.runMany(1, 256, 32, (i) => ({ op: 'read', nsid: 1, slba: BigInt((i * 37 % 64) * 8), nlb: 8, sgl: 'keyed' }));
    expect(r.length).toBe(256);
    expect(r.every((d) => d.cqe.status === 0 && d.verified === true)).toBe(true);
    expect(f.target.counters.softwareSteps).toBe(sw);
  });

  it('backend PCI error on an idle controller: the nvme_ctrl goes down, the next capsules reach software (BACKEND_DOWN), which serves them', () => {
    bringUp();
    enableOffload(f, 1);
    watchDevice(f);
    expect(f.run(1, { op: 'write', nsid: 1, slba: 0n, nlb: 8, sgl: 'keyed' }).done!.cqe.status).toBe(0);
    expect(offloadFault(f, 'pci-error')).toBe(false);
    expect(f.deviceCounts['-1:BACKEND_PCI_ERR']).toBe(1);
    const sw = f.target.counters.softwareSteps, caps = f.target.counters.capsules;
    const w = f.run(1, { op: 'write', nsid: 1, slba: 64n, nlb: 8, sgl: 'keyed' });
    expect(w.done!.cqe.status).toBe(0);
    const rows = f.flow.since(w.flowFrom).filter((r) => r.cid === w.cid && r.qid === 1);
    expect(rows.find((r) => r.stage === 'TO_SOFTWARE')!.detail).toContain('BACKEND_DOWN');
    expect(rows.some((r) => r.owner === 'software' && r.stage === 'COMPLETING')).toBe(true);
    expect(f.target.counters.capsules).toBe(caps + 1);
    expect(f.target.counters.softwareSteps).toBeGreaterThan(sw);
    // served by software from its own medium (the two media are separate): a READ of what software wrote verifies
    const r = f.run(1, { op: 'read', nsid: 1, slba: 64n, nlb: 8, sgl: 'keyed' }).done!;
    expect([r.cqe.status, r.verified]).toEqual([0, true]);
  });
});
