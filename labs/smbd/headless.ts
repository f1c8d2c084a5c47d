// Lab 5 beyond its steps, headless (`verbslab lab run smbd` calls headless() after the lab's steps): two SMB Direct
// peers on fresh device sessions. Each check states what it expects; the lab passes only if every one holds:
//   negotiation   Linux defaults accepted; ksmbd refuses the MS-SMBD 4.1 example's 128 KiB; version 2.0 rejected
//   deadlock      the same seeded burst (seeds 1..5): last-credit-bug stalls with both sides at 0 send credits,
//                 spec delivers every message byte for byte
//   keepalive     120 s idle: RESPONSE_REQUESTED sent and answered; a hung peer: disconnect 5 s later
//   rdma          SMB2 READ and WRITE on both channels and both server buffer policies, data verified
import { NativeExecutor } from '../../app/host/executor.ts';
import type { LabAgentResult } from '../../app/scenario/lab-cli.ts';
import { SmbdIo } from './io.ts';
import type { Policy } from './io.ts';
import { LAB_CREDITS, SmbdSession } from './session.ts';
import type { SessionOptions } from './session.ts';

interface Check { id: string; pass: boolean; detail: string }
const S = 1_000_000_000;

function withSession<T>(opts: SessionOptions, fn: (s: SmbdSession) => T, seed = 1): T {
  const ex = new NativeExecutor({ seed });
  try {
    const s = new SmbdSession(ex, opts);
    s.setup();
    return fn(s);
  } finally { ex.close(); }
}
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export function runChecks(): Check[] {
  const out: Check[] = [];
  const check = (id: string, pass: boolean, detail: string) => out.push({ id, pass, detail });

  withSession({}, (s) => {
    const v = s.negotiate();
    check('negotiate.linux', v.serverOutcome === 'accept' && v.clientOutcome === 'accept' && v.client?.sendCredits === 255,
      `server ${v.serverOutcome}, client ${v.clientOutcome}, SendCredits ${v.client?.sendCredits}, MaxSendSize ${v.client?.maxSendSize}`);
  });
  withSession({ server: 'ksmbd' }, (s) => {
    const v = s.negotiate({ creditsRequested: 10, preferredSendSize: 1024, maxReceiveSize: 1024, maxFragmentedSize: 131072 });
    const failed = v.serverRules.filter((r) => !r.pass).map((r) => r.id);
    check('negotiate.ksmbd-4.1', v.serverOutcome === 'terminate' && failed.join() === 'req.max-fragmented-size', `ksmbd: ${v.serverOutcome} (${failed.join(', ')}), client ${v.clientOutcome}`);
  });
  withSession({}, (s) => {
    const v = s.negotiate({ minVersion: 0x0200, maxVersion: 0x0200 });
    check('negotiate.version', v.serverOutcome === 'reject' && v.response?.status === 0xc00000bb && v.clientOutcome === 'terminate',
      `server ${v.serverOutcome} (Status 0x${(v.response?.status ?? 0).toString(16)}), client ${v.clientOutcome}`);
  });

  for (const seed of [1, 2, 3, 4, 5]) {
    const run = (p: 'spec' | 'last-credit-bug') => withSession({ client: p, server: p, clientCfg: LAB_CREDITS, serverCfg: LAB_CREDITS }, (s) => {
      s.negotiate();
      s.client.apply(s.client.conn!.send(new Uint8Array(64)));
      s.run();
      s.burst(seed, 24);
      const b = s.board();
      const intact = hex(Buffer.concat(s.server.delivered.slice(1).map((d) => d.message))) === hex(Buffer.concat(s.sentByClient))
        && hex(Buffer.concat(s.client.delivered.map((d) => d.message))) === hex(Buffer.concat(s.sentByServer));
      return { stalled: b.stalled, c: b.client!, v: b.server!, intact };
    });
    const bug = run('last-credit-bug'), spec = run('spec');
    check(`deadlock.seed-${seed}`, bug.stalled && bug.c.sendCredits === 0 && bug.v.sendCredits === 0 && !spec.stalled && spec.intact,
      `last-credit-bug: ${bug.stalled ? 'STALLED' : 'ran'} (send credits ${bug.c.sendCredits}/${bug.v.sendCredits}, queued ${bug.c.sendQueue}/${bug.v.sendQueue}); ` +
      `spec: ${spec.stalled ? 'STALLED' : 'delivered all'} (${spec.intact ? 'bytes intact' : 'BYTES DIFFER'}, last credit held ${spec.c.lastCreditHolds + spec.v.lastCreditHolds} times)`);
  }

  withSession({}, (s) => {
    s.negotiate();
    s.advance(120 * S);
    const sent = s.client.notes.some((n) => n.dir === 'tx' && n.flags === 1);
    const back = s.client.conn!.keepalive;
    s.server.paused = true;
    s.advance(120 * S);
    const waiting = s.client.conn!.keepalive;
    s.advance(5 * S);
    const d = s.client.conn!.disconnect;
    check('keepalive', sent && back === 'NONE' && waiting === 'SENT' && d?.rule === 'keepalive.timeout',
      `idle 120 s: RESPONSE_REQUESTED ${sent ? 'sent' : 'NOT sent'}, answered -> ${back}; hung peer: ${waiting}, 5 s later ${d ? d.rule : 'still connected'}`);
  });

  for (const policy of ['pool', 'per-io'] as Policy[]) {
    withSession({}, (s) => {
      s.negotiate();
      const io = new SmbdIo(s, policy, 1 << 20, policy === 'pool' ? 64 : 1);
      io.setup();
      const recs = [io.io('READ', 'RDMA_V1_INVALIDATE'), io.io('WRITE', 'RDMA_V1_INVALIDATE'), io.io('READ', 'RDMA_V1'), io.io('WRITE', 'RDMA_V1')];
      const ok = recs.every((r) => r.verified) && recs[0]!.invalidatedBy === 'remote' && recs[2]!.invalidatedBy === 'local';
      const st = io.stats;
      check(`rdma.${policy}`, ok, `${st.ios} x 1 MiB verified ${st.verified}; server registrations ${st.serverRegistrations}, invalidations ${st.serverInvalidations}, keys ${st.serverKeys}, pinned ${st.serverPinnedBytes >> 20} MiB; client invalidations by LOCAL_INV ${st.clientInvalidations}`);
    });
  }
  return out;
}

export function headless(): LabAgentResult {
  const checks = runChecks();
  return {
    passed: checks.every((c) => c.pass),
    lines: checks.map((c) => `${c.pass ? 'ok  ' : 'FAIL'} ${c.id.padEnd(22)} ${c.detail}`),
    result: { lab: 'smbd', checks },
  };
}
