// Two peers on the device: negotiation over the QPs, messages crossing, fragments reassembled byte for byte, the
// deadlock of the last-credit bug under a seeded burst and its absence with the spec's rule (same seed, same load).
import { afterEach, describe, expect, it } from 'vitest';
import { NativeExecutor } from '../../app/host/executor.ts';
import { LAB_CREDITS, SmbdSession } from './session.ts';
import type { SessionOptions } from './session.ts';

const exs: NativeExecutor[] = [];
afterEach(() => { for (const e of exs.splice(0)) e.close(); });
function session(opts: SessionOptions = {}, seed = 1): SmbdSession {
  const ex = new NativeExecutor({ seed });
  exs.push(ex);
  const s = new SmbdSession(ex, opts);
  s.setup();
  return s;
}

describe('negotiation over the device', () => {
  it('Linux defaults on both sides: accepted, 255 credits granted, 1364-byte sends', () => {
    const s = session();
    const v = s.negotiate();
    expect(v.serverOutcome).toBe('accept');
    expect(v.clientOutcome).toBe('accept');
    expect(v.requestHex).toHaveLength(40);
    expect(v.responseHex).toHaveLength(64);
    expect(v.response).toMatchObject({ creditsGranted: 255, status: 0, preferredSendSize: 1364, maxFragmentedSize: 173910 });
    expect(v.client).toMatchObject({ sendCredits: 255, maxSendSize: 1364 });
    expect(s.server.postedRecvs).toBe(255);
  });
  it('ksmbd server, MaxFragmentedSize 131072: terminated without a response', () => {
    const s = session({ server: 'ksmbd' });
    const v = s.negotiate({ maxFragmentedSize: 131072 });
    expect(v.serverOutcome).toBe('terminate');
    expect(v.clientOutcome).toBe('no-response');
    expect(v.serverRules.find((r) => !r.pass)?.id).toBe('req.max-fragmented-size');
  });
  it('version 2.0 only: the spec server answers STATUS_NOT_SUPPORTED, the client refuses it', () => {
    const s = session();
    const v = s.negotiate({ minVersion: 0x0200, maxVersion: 0x0200 });
    expect(v.serverOutcome).toBe('reject');
    expect(v.response?.status).toBe(0xc00000bb);
    expect(v.clientOutcome).toBe('terminate');
  });
});

describe('data transfer over the device', () => {
  it('a 4000-byte message crosses as three fragments and is reassembled byte for byte', () => {
    const s = session();
    s.negotiate();
    const msg = Uint8Array.from({ length: 4000 }, (_, i) => (i * 13) & 0xff);
    s.client.apply(s.client.conn!.send(msg));
    s.run();
    expect(s.server.delivered).toHaveLength(1);
    expect(s.server.delivered[0]!.fragments).toBe(3);
    expect(Buffer.from(s.server.delivered[0]!.message).equals(Buffer.from(msg))).toBe(true);
    expect(s.client.notes.filter((n) => n.dir === 'tx').map((n) => n.remainingDataLength)).toEqual([2660, 1320, 0]);
  });
});

describe('the last-credit deadlock (same seeded burst)', () => {
  const opts = (p: 'spec' | 'last-credit-bug'): SessionOptions => ({ client: p, server: p, clientCfg: LAB_CREDITS, serverCfg: LAB_CREDITS });
  const start = (p: 'spec' | 'last-credit-bug') => {
    const s = session(opts(p));
    s.negotiate();
    // the client's first message (as an SMB2 NEGOTIATE would) grants the server its credits
    s.client.apply(s.client.conn!.send(new Uint8Array(64)));
    s.run();
    return s;
  };
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: the buggy profile stalls with both sides at 0 send credits; the spec profile delivers everything`, () => {
      const bug = start('last-credit-bug');
      bug.burst(seed, 24);
      const b = bug.board();
      expect(b.stalled).toBe(true);
      expect(b.client).toMatchObject({ sendCredits: 0, blocked: 'no-send-credits' });
      expect(b.server).toMatchObject({ sendCredits: 0, blocked: 'no-send-credits' });
      expect(b.client!.sendQueue).toBeGreaterThan(0);

      const spec = start('spec');
      spec.burst(seed, 24);
      const g = spec.board();
      expect(g.stalled).toBe(false);
      expect(spec.server.delivered.slice(1).map((d) => Buffer.from(d.message).toString('hex'))).toEqual(spec.sentByClient.map((m) => Buffer.from(m).toString('hex')));
      expect(spec.client.delivered.map((d) => Buffer.from(d.message).toString('hex'))).toEqual(spec.sentByServer.map((m) => Buffer.from(m).toString('hex')));
      expect(g.client!.lastCreditHolds + g.server!.lastCreditHolds).toBeGreaterThan(0);
    });
  }
});
