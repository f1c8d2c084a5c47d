// Lab 5's agent in the backend host: every reply parses with its schema (commands.ts); negotiation records, the
// credit board mid-burst and after, the deadlock with the bug profile, keepalive answered and timed out, SMB2 I/O.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostCore } from '../../app/host/core.ts';
import { NativeExecutor } from '../../app/host/executor.ts';
import { attach } from './host.ts';
import { Board, IoResult, MeasureResult, StartResult } from './commands.ts';

const cores: { core: HostCore; dir: string }[] = [];
afterEach(() => { for (const c of cores.splice(0)) { c.core.close(); fs.rmSync(c.dir, { recursive: true, force: true }); } });
function core(): HostCore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-labsmbd-'));
  const c = new HostCore(new NativeExecutor(), { sessionDir: dir, defaultDevice: 'rxe' });
  attach(c);
  c.start();
  cores.push({ core: c, dir });
  return c;
}
const run = (c: HostCore, cmd: string, args: Record<string, unknown> = {}) => {
  const r = c.execute({ cmd, args } as never);
  if (!r.ok) throw new Error(`${cmd}: ${r.error.code} ${r.error.message}`);
  return r.result;
};

describe('lab smbd agent in the backend host', () => {
  it('start: negotiation with its rules, both sides established; a ksmbd server refuses 128 KiB', () => {
    const c = core();
    const s = StartResult.parse(run(c, 'lab.smbd.start', {}));
    expect(s.negotiation).toMatchObject({ serverOutcome: 'accept', clientOutcome: 'accept' });
    expect(s.board.client).toMatchObject({ state: 'established', sendCreditTarget: 255 });
    const k = StartResult.parse(run(c, 'lab.smbd.start', { server: 'ksmbd', request: { maxFragmentedSize: 131072 } }));
    expect(k.negotiation).toMatchObject({ serverOutcome: 'terminate', clientOutcome: 'no-response' });
    expect(k.board.client).toBeNull();
  });

  it('burst without running, then steps: the board mid-transfer; the bug profile ends stalled, the spec one does not', () => {
    const c = core();
    run(c, 'lab.smbd.start', { client: 'last-credit-bug', server: 'last-credit-bug', credits: 'lab' });
    const queued = Board.parse(run(c, 'lab.smbd.burst', { seed: 1, perSide: 24, run: false }));
    // the client spent one of its 8 credits on its first message: 7 sends go at once, the server's 8
    expect([queued.notes.client.length, queued.notes.server.length]).toEqual([7, 8]);
    expect(queued.notes.client.every((n) => n.dir === 'tx' && n.creditsGranted === 0)).toBe(true);
    const mid = Board.parse(run(c, 'lab.smbd.step', { count: 20 }));
    expect(mid.client!.sendQueue + mid.server!.sendQueue).toBeGreaterThan(0);
    expect([mid.client!.sendCredits, mid.server!.sendCredits]).toEqual([0, 0]);
    const end = Board.parse(run(c, 'lab.smbd.step', { count: 2000 }));
    expect(end.stalled).toBe(true);
    expect([end.client!.sendCredits, end.server!.sendCredits]).toEqual([0, 0]);
    run(c, 'lab.smbd.start', { credits: 'lab' });
    const ok = Board.parse(run(c, 'lab.smbd.burst', { seed: 1, perSide: 24 }));
    expect(ok.stalled).toBe(false);
    expect(ok.delivered.length).toBe(48);
  });

  it('keepalive: 120 s idle sends RESPONSE_REQUESTED and the answer returns it to NONE; a hung server: disconnect after 5 s', () => {
    const c = core();
    run(c, 'lab.smbd.start', {});
    const a = Board.parse(run(c, 'lab.smbd.advance', { seconds: 120 }));
    expect(a.notes.client.some((n) => n.dir === 'tx' && n.flags === 1)).toBe(true);
    expect(a.client!.keepalive).toBe('NONE');
    const hung = Board.parse(run(c, 'lab.smbd.advance', { seconds: 120, answer: false }));
    expect(hung.client).toMatchObject({ keepalive: 'SENT' });
    const gone = Board.parse(run(c, 'lab.smbd.advance', { seconds: 5, answer: false }));
    expect(gone.client).toMatchObject({ state: 'disconnected', disconnect: { rule: 'keepalive.timeout' } });
  });

  it('io: READ with RDMA_V1_INVALIDATE through the pool, verified; send of a too-large message is refused', () => {
    const c = core();
    run(c, 'lab.smbd.start', {});
    const r = IoResult.parse(run(c, 'lab.smbd.io', { op: 'READ' }));
    expect(r.io).toMatchObject({ responseOpcode: 'IBV_WR_SEND_WITH_INV', invalidatedBy: 'remote', verified: true });
    expect(r.stats.serverRegistrations).toBe(1);
    const big = c.execute({ cmd: 'lab.smbd.send', args: { from: 'client', bytes: 1 << 20 } } as never);
    expect(big).toMatchObject({ ok: false, error: { code: 'EMSGSIZE' } });
  });

  it('measure: both policies and both crossing modes counted in sessions of their own (no session needed)', () => {
    const c = core();
    const m = MeasureResult.parse(run(c, 'lab.smbd.measure', { rounds: 1, events: 128 }));
    expect(m.registration.pool).toMatchObject({ serverRegistrations: 1, serverInvalidations: 0 });
    expect(m.registration.perIo.serverRegistrations).toBe(m.registration.perIo.ios);
    expect(m.crossing).toMatchObject({ events: 128, single: { crossings: 128 }, batched: { crossings: 2, perCrossing: 64 } });
  }, 60_000);

  it('before start: ENOENT', () => {
    const c = core();
    expect(c.execute({ cmd: 'lab.smbd.board', args: {} } as never)).toMatchObject({ ok: false, error: { code: 'ENOENT' } });
  });
});
