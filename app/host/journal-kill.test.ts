// Journal durability: a real backend host process (app/host/main.ts over Node IPC, as the browser-mode server
// runs it) is killed with SIGKILL at a random moment of a scripted session, 50 times in a row on one session
// directory (some kills land while it replays its journal at start). After each kill:
//   - the journal's valid lines are exactly a prefix of the script's commands (nothing reordered, nothing half in),
//   - every command whose reply reached the client is in it (a command is journaled before it is answered),
//   - the restarted host replays it to the same device state (digest of session.info, device.list, both QPs and
//     both buffers) as a fresh in-process executor that ran the same prefix,
//   - a torn last line is skipped, reported in the host's ready message, and cut off the file, so the commands
//     that follow are not lost. (A SIGKILL practically never splits appendFileSync's one write of a short line, so
//     every 7th round the test itself leaves the fragment of the next line behind, as a crash inside the write would.)
// Afterwards the script continues where the journal ends. VL_KILL_ROUNDS overrides the 50 rounds.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Command, type CommandInput } from '../protocol/index.ts';
import { sha256Hex } from '../scenario/sha256.ts';
import { NativeExecutor } from './executor.ts';
import { JOURNAL_FILE } from './journal.ts';

const ROUNDS = Number(process.env.VL_KILL_ROUNDS ?? 50);
const hostScript = path.join(__dirname, 'main.ts');

/** a deterministic PRNG (xorshift32) for the script and the kill times */
function rng(seed: number) { let x = seed >>> 0 || 1; return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 2 ** 32; }; }

interface Handles { qpA: number; qpB: number; cqA: number; cqB: number; bufA: { addr: number }; bufB: { addr: number }; mrA: { lkey: number; rkey: number }; mrB: { lkey: number; rkey: number } }

/** The script: setup, then a long mix of memory writes, RDMA WRITEs A -> B of random sizes, engine steps and
 *  polls. Every command succeeds and changes state (so every one is journaled). Handles and keys are learned by
 *  running the setup on an in-process executor (the device is deterministic: the host gives the same). */
function makeScript(n: number): { script: Command[]; h: Handles } {
  const ex = new NativeExecutor({ seed: 1 });
  const script: Command[] = [];
  // as the journal holds them: validated, defaults filled in
  const run = (raw: CommandInput) => { const c = Command.parse(raw); script.push(c); const r = ex.exec(c); if (!r.ok) throw new Error(`${c.cmd}: ${r.error.message}`); return r.result as Record<string, unknown>; };
  const dA = run({ cmd: 'device.create', args: { profile: 'rxe' } }).handle as number;
  const dB = run({ cmd: 'device.create', args: { profile: 'rxe' } }).handle as number;
  const pA = run({ cmd: 'pd.alloc', args: { device: dA } }).pd as number;
  const pB = run({ cmd: 'pd.alloc', args: { device: dB } }).pd as number;
  const bufA = run({ cmd: 'buffer.alloc', args: { length: 16384 } }) as { addr: number };
  const bufB = run({ cmd: 'buffer.alloc', args: { length: 16384 } }) as { addr: number };
  const access = ['IBV_ACCESS_LOCAL_WRITE', 'IBV_ACCESS_REMOTE_WRITE', 'IBV_ACCESS_REMOTE_READ'] as const;
  const mrA = run({ cmd: 'mr.reg', args: { pd: pA, addr: bufA.addr, length: 16384, access: [...access] } }) as { lkey: number; rkey: number };
  const mrB = run({ cmd: 'mr.reg', args: { pd: pB, addr: bufB.addr, length: 16384, access: [...access] } }) as { lkey: number; rkey: number };
  const cqA = run({ cmd: 'cq.create', args: { device: dA, cqe: 256 } }).cq as number;
  const cqB = run({ cmd: 'cq.create', args: { device: dB, cqe: 256 } }).cq as number;
  const qpA = run({ cmd: 'qp.create', args: { pd: pA, sendCq: cqA, recvCq: cqA, qpType: 'IBV_QPT_RC' } }).handle as number;
  const qpB = run({ cmd: 'qp.create', args: { pd: pB, sendCq: cqB, recvCq: cqB, qpType: 'IBV_QPT_RC' } }).handle as number;
  run({ cmd: 'qp.connect', args: { qp: qpA, peer: qpB } });
  const r = rng(17);
  let k = 0;
  while (script.length < n) {
    const off = Math.floor(r() * 8000);
    const len = 1 + Math.floor(r() * 4000);
    const hex = Array.from({ length: 8 }, () => Math.floor(r() * 256).toString(16).padStart(2, '0')).join('');
    run({ cmd: 'memory.write', args: { addr: bufA.addr + off, data: hex } });
    run({ cmd: 'post.send', args: { qp: qpA, wrs: [{ wrId: ++k, opcode: 'IBV_WR_RDMA_WRITE', sgList: [{ addr: bufA.addr + off, length: len, lkey: mrA.lkey }], remoteAddr: bufB.addr + Math.floor(r() * 8000), rkey: mrB.rkey }] } });
    run({ cmd: 'engine.step', args: { count: 1 + Math.floor(r() * 40) } });
    if (k % 4 === 0) { run({ cmd: 'engine.run', args: {} }); run({ cmd: 'cq.poll', args: { cq: cqA, max: 16 } }); }
  }
  ex.close();
  return { script, h: { qpA, qpB, cqA, cqB, bufA, bufB, mrA, mrB } };
}

const stateQueries = (h: Handles): Command[] => [
  { cmd: 'session.info', args: {} }, { cmd: 'device.list', args: {} },
  { cmd: 'qp.query', args: { qp: h.qpA } }, { cmd: 'qp.query', args: { qp: h.qpB } },
  { cmd: 'memory.read', args: { addr: h.bufA.addr, length: 16384 } }, { cmd: 'memory.read', args: { addr: h.bufB.addr, length: 16384 } },
];
const digestOf = (results: unknown[]) => sha256Hex(JSON.stringify(results));

/** The digest a fresh executor reaches after the first k commands of the script. The journal only grows, so one
 *  reference executor moves forward to k (the queries are read-only and change nothing). */
class Reference {
  private ex = new NativeExecutor({ seed: 1 });
  private at = 0;
  constructor(private readonly script: Command[], private readonly h: Handles) {}
  digest(k: number): string {
    if (k < this.at) throw new Error(`the journal shrank from ${this.at} to ${k} commands`);
    for (; this.at < k; this.at++) {
      const c = this.script[this.at]!;
      const r = this.ex.exec(c);
      if (!r.ok) throw new Error(`reference: ${c.cmd}: ${r.error.message}`);
    }
    return digestOf(stateQueries(this.h).map((q) => { const r = this.ex.exec(q); return r.ok ? r.result : r.error; }));
  }
  close(): void { this.ex.close(); }
}

/** one host process, talked to as the server does (Node IPC, one connection) */
class Host {
  proc: ChildProcess;
  ready: Promise<{ journalEntries: number; replay: { skipped: { line: number; reason: string }[]; failed: unknown[] } }>;
  replies = new Map<number, { ok: boolean; result?: unknown; error?: unknown }>();
  private waiting = new Map<number, (r: { ok: boolean; result?: unknown; error?: unknown }) => void>();
  constructor(dir: string) {
    this.proc = fork(hostScript, ['--session-dir', dir, '--default-device', 'none'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    this.proc.stderr?.on('data', () => {});
    this.ready = new Promise((resolve, reject) => {
      this.proc.on('message', (m: { t?: string; type?: string; text?: string; journalEntries?: number; replay?: never }) => {
        if (m.t === 'ready') resolve({ journalEntries: m.journalEntries!, replay: m.replay! });
        else if (m.t === 'out' && m.type === 'reply' && m.text) {
          const r = JSON.parse(m.text) as { id: number; ok: boolean; result?: unknown; error?: unknown };
          this.replies.set(r.id, r);
          this.waiting.get(r.id)?.(r);
        }
      });
      this.proc.on('exit', (code, sig) => reject(new Error(`host exited (${sig ?? code}) before ready`)));
    });
    this.ready.catch(() => {});
  }
  send(id: number, command: Command): void { if (this.proc.connected) this.proc.send({ t: 'msg', conn: 1, data: JSON.stringify({ type: 'request', id, command }) }); }
  call(id: number, command: Command): Promise<{ ok: boolean; result?: unknown; error?: unknown }> {
    return new Promise((resolve) => { this.waiting.set(id, resolve); this.send(id, command); });
  }
  kill(): Promise<void> {
    return new Promise((resolve) => { if (this.proc.exitCode !== null || this.proc.signalCode) { resolve(); return; } this.proc.once('exit', () => resolve()); this.proc.kill('SIGKILL'); });
  }
}

function journalLines(dir: string): { valid: Command[]; tornTail: boolean } {
  const raw = fs.existsSync(path.join(dir, JOURNAL_FILE)) ? fs.readFileSync(path.join(dir, JOURNAL_FILE), 'utf8') : '';
  const parts = raw.split('\n');
  const valid: Command[] = [];
  for (const p of parts.slice(0, -1)) if (p.trim()) valid.push((JSON.parse(p) as { command: Command }).command);
  return { valid, tornTail: parts[parts.length - 1] !== '' };
}

describe('journal durability under SIGKILL', () => {
  it(`a host killed at random points ${ROUNDS} times restarts to the same device state`, async () => {
    const { script, h } = makeScript(40000);
    const reference = new Reference(script, h);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-kill-'));
    const r = rng(99);
    let done = 0;                 // commands known to be in the journal
    let tornWritten = 0;
    let tornPending = false;     // a torn tail written since the last host that had to read it
    let tornReported = 0;
    let killedBeforeReady = 0;
    let nextId = 1;
    for (let round = 0; round < ROUNDS; round++) {
      const host = new Host(dir);
      const acked: number[] = [];                         // script indexes whose reply arrived
      // a quarter of the kills land 30-730 ms after the spawn (during start and journal replay), the others 0-400 ms
      // into the session; after a torn tail was left, the host must get to read it (the kill waits for ready)
      const mustStart = round % 7 === 1;
      const early = !mustStart && r() < 0.25;
      const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
      let killAt = early ? sleep(30 + Math.floor(r() * 700)) : null;
      const started = killAt ? await Promise.race([host.ready.then((x) => x), killAt.then(() => null)]) : await host.ready;
      killAt ??= sleep(Math.floor(r() * 400));
      if (started) {
        // replay: the same state as a fresh executor that ran the journal's commands
        expect(started.journalEntries, `round ${round}`).toBe(done);
        if (mustStart && tornPending) {
          expect(started.replay.skipped.map((s) => s.reason).join(' '), `round ${round}`).toMatch(/torn last line/);
          tornReported++;
          tornPending = false;
        } else expect(started.replay.skipped, `round ${round}`).toEqual([]);
        const state = await Promise.all(stateQueries(h).map((q) => host.call(nextId++, q)));
        expect(digestOf(state.map((s) => (s.ok ? s.result : s.error))), `round ${round}: state after replaying ${done} commands`).toBe(reference.digest(done));
        // stream the rest of the script (pipelined: the host is busy when the kill lands)
        const base = nextId;
        const first = done;
        for (let i = first; i < Math.min(script.length, first + 3000); i++) {
          const id = nextId++;
          host.call(id, script[i]!).then((rep) => { if (rep.ok) acked.push(i); });
        }
        void base;
        await killAt;
      } else killedBeforeReady++;
      await host.kill();
      const j = journalLines(dir);
      // exactly a prefix of the script, every acknowledged command in it
      expect(j.valid.length, `round ${round}`).toBeGreaterThanOrEqual(done);
      expect(j.valid, `round ${round}`).toEqual(script.slice(0, j.valid.length));
      if (acked.length) expect(j.valid.length, `round ${round}: acknowledged commands`).toBeGreaterThan(Math.max(...acked));
      expect(j.tornTail, `round ${round}`).toBe(false);
      done = j.valid.length;
      if (round % 7 === 0 && done < script.length) {
        // the fragment a crash inside the write of the next line would leave
        const line = JSON.stringify({ n: done + 1, command: script[done] });
        fs.appendFileSync(path.join(dir, JOURNAL_FILE), line.slice(0, Math.max(1, Math.floor(line.length / 2))));
        tornWritten++;
        tornPending = true;
      }
    }
    // the last restart: the whole journal replays, and the state matches
    const last = new Host(dir);
    const ready = await last.ready;
    expect(ready.journalEntries).toBe(done);
    const state = await Promise.all(stateQueries(h).map((q) => last.call(nextId++, q)));
    expect(digestOf(state.map((s) => (s.ok ? s.result : s.error)))).toBe(reference.digest(done));
    reference.close();
    await last.kill();
    expect(done).toBeGreaterThan(ROUNDS);                  // the session did move on between kills
    expect(tornReported).toBeGreaterThan(0);
    console.log(`[kill test] ${ROUNDS} SIGKILLs (${killedBeforeReady} before the host was ready), ${done} commands journaled, ${tornWritten} torn tails written, ${tornReported} reported on restart`);
  }, 600_000);
});
