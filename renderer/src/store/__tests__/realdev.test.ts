// The console store and a real device: "Open" on a real device sends session.reset { backend: 'ibverbs', device },
// device.list's `backend` becomes the store's (the panels then say what is not visible on a real device), a refusal
// stays under that device's row, and "Back to the software devices" is a plain session.reset.
import { describe, expect, it } from 'vitest';
import type { Command, Reply } from '../../../../app/protocol/index.ts';
import { createConsoleStore, type ConsoleTransport } from '../store.ts';
import { deviceList, deviceOut, profileOut, sessionInfo } from './replies.ts';

const BACKEND = { kind: 'ibverbs' as const, device: 'mlx5_0', library: 'libibverbs.so.1', software: false };

function fakeHost() {
  const sent: Command[] = [];
  let real = false;
  const transport: ConsoleTransport = {
    async call(c) {
      sent.push(c);
      const id = sent.length;
      if (c.cmd === 'session.reset') {
        const a = c.args as { backend?: string; device?: string };
        if (a.device === 'nope') return { type: 'reply', id, ok: false, error: { code: 'ENODEV', message: 'args.device: no RDMA device "nope" (it lists: mlx5_0)', field: 'args.device' } } as Reply;
        real = a.backend === 'ibverbs';
        return { type: 'reply', id, ok: true, result: { seed: 1, epoch: id, ...(real ? { backend: BACKEND } : {}) } } as Reply;
      }
      const result = c.cmd === 'device.list' ? deviceList({
        devices: [deviceOut({ handle: 1, name: real ? 'mlx5_0' : 'rxe0', profile: profileOut({ name: real ? 'ibverbs' : 'rxe' }) })],
        realDevices: [{ name: 'mlx5_0', ports: [], usable: true, note: "open it: session.reset { backend: 'ibverbs', device: 'mlx5_0' }" }],
        libibverbs: true, ...(real ? { backend: BACKEND } : {}),
      }) : c.cmd === 'session.info' ? sessionInfo(real ? { backend: BACKEND } : {}) : {};
      return { type: 'reply', id, ok: true, result } as Reply;
    },
    onEvents() {}, onHost() {}, control() {},
  };
  return { sent, transport };
}

describe('a real device in the console store', () => {
  it('opens a real device with session.reset and returns to the software devices', async () => {
    const h = fakeHost();
    const store = createConsoleStore({ transport: h.transport, schedule: () => {} });
    await store.getState().refreshDevices();
    expect(store.getState().backend).toBeNull();
    expect(store.getState().realDevices.map((r) => r.name)).toEqual(['mlx5_0']);

    expect(await store.getState().resetSession(undefined, 'mlx5_0')).toBe(true);
    expect(h.sent.find((c) => c.cmd === 'session.reset')).toEqual({ cmd: 'session.reset', args: { backend: 'ibverbs', device: 'mlx5_0' } });
    expect(store.getState().backend).toEqual(BACKEND);
    expect(store.getState().devices.map((d) => d.name)).toEqual(['mlx5_0']);

    expect(await store.getState().resetSession()).toBe(true);
    expect(h.sent.filter((c) => c.cmd === 'session.reset').at(-1)).toEqual({ cmd: 'session.reset', args: {} });
    expect(store.getState().backend).toBeNull();
  });

  it('a device the host cannot open: the error under that device, the session unchanged', async () => {
    const h = fakeHost();
    const store = createConsoleStore({ transport: h.transport, schedule: () => {} });
    await store.getState().refreshDevices();
    expect(await store.getState().resetSession(undefined, 'nope')).toBe(false);
    expect(store.getState().errors['session.reset:nope']).toMatchObject({ code: 'ENODEV' });
    expect(store.getState().backend).toBeNull();
  });
});
