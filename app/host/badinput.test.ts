// The Electron path: the renderer talks to the backend host over a MessagePort (structured-clone values, no
// server in between). Every bad input of the shared table (badinput.cases.ts) gets its reply through the port, as
// app/host/main.ts wires it, and the same host core answers a good command after each.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import type { Reply } from '../protocol/index.ts';
import { BAD_INPUTS, GOOD } from './badinput.cases.ts';
import { HostCore } from './core.ts';
import { NativeExecutor } from './executor.ts';

const core = new HostCore(new NativeExecutor({ seed: 1 }), { sessionDir: fs.mkdtempSync(path.join(os.tmpdir(), 'vl-badport-')), defaultDevice: 'rxe' });
core.start();
const { port1: host, port2: renderer } = new MessageChannel();
// as app/host/main.ts serves a renderer's port
host.on('message', (data) => core.handle(data, (r) => host.postMessage(r)));
const replies: Reply[] = [];
let wake: (() => void) | null = null;
renderer.on('message', (m: Reply) => { if (m?.type === 'reply') { replies.push(m); wake?.(); } });
afterAll(() => { host.close(); renderer.close(); core.close(); });

async function send(value: unknown): Promise<Reply> {
  const n = replies.length;
  renderer.postMessage(value);
  const t0 = Date.now();
  while (replies.length <= n) {
    if (Date.now() - t0 > 10_000) throw new Error('no reply');
    await new Promise<void>((r) => { wake = r; setTimeout(r, 50); });
  }
  return replies[n]!;
}

describe('bad input over the MessagePort (Electron)', () => {
  it('each kind of bad message gets its reply, as a value and as text, and the host goes on', async () => {
    expect((await send(JSON.parse(JSON.stringify({ type: 'request', id: 1, command: { cmd: 'pd.alloc', args: { device: 1 } } })))).result).toMatchObject({ pd: 2 });
    let id = 100;
    let asValues = 0;
    for (const bad of BAD_INPUTS) {
      let value: unknown;
      let parsed = true;
      try { value = JSON.parse(bad.text); } catch { parsed = false; }
      const forms: unknown[] = [bad.text];
      // a renderer posts objects; structured clone itself refuses very deep ones at the sender
      if (parsed) { try { structuredClone(value); forms.push(value); asValues++; } catch { /* the sender cannot post it */ } }
      for (const form of forms) {
        const what = `${bad.what} (${typeof form === 'string' ? 'text' : 'value'})`;
        const r = await send(form);
        expect(r.ok, what).toBe(false);
        const code = typeof form === 'string' ? bad.code : (bad.portCode ?? bad.code);
        expect(r.error?.code, `${what}: ${r.error?.message}`).toBe(code);
        expect(r.id, what).toBe(typeof form === 'string' || bad.portId === undefined ? bad.id : bad.portId);
        if (bad.field && code === bad.code) expect(r.error?.field ?? '', `${what}: ${r.error?.message}`).toMatch(new RegExp(`^${bad.field.replace(/\./g, '\\.')}`));
        const good = await send(JSON.parse(GOOD(++id)));
        expect(good.ok, `after ${what}`).toBe(true);
      }
    }
    expect(asValues).toBeGreaterThan(20);
    // what only a port can carry: binary data, undefined, a Map, a Set, a Date where the command goes
    const odd: [string, unknown][] = [['Uint8Array', new Uint8Array([1, 2, 3])], ['ArrayBuffer', new ArrayBuffer(8)], ['undefined', undefined],
      ['Map', new Map([[1, 2]])], ['Set in a request', { type: 'request', id: 7, command: new Set([1]) }], ['Date as a command', { type: 'request', id: 8, command: new Date(0) }]];
    for (const [what, v] of odd) {
      const r = await send(v);
      expect(r.ok, what).toBe(false);
      expect(r.error?.code, what).toBe('BAD_REQUEST');
      expect((await send(JSON.parse(GOOD(++id)))).ok).toBe(true);
    }
  }, 60_000);

  it('an executor that throws is that command\'s INTERNAL error, not the host\'s end', async () => {
    const exec = core.executor.exec.bind(core.executor);
    core.executor.exec = () => { throw new TypeError('boom in native code'); };
    try {
      const r = await send(JSON.parse(GOOD(500)));
      expect(r).toMatchObject({ id: 500, ok: false, error: { code: 'INTERNAL' } });
      expect(r.error?.message).toContain('boom in native code');
    } finally { core.executor.exec = exec; }
    expect((await send(JSON.parse(GOOD(501)))).ok).toBe(true);
  });
});
