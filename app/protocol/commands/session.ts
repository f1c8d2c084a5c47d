// Session-wide commands: info, reset, the journal, recent events, the pcap of the session's wire.
import { z } from 'zod';
import { command, RHandle, RU64 } from '../descriptor.ts';
import { DeviceEvent } from '../event.ts';
import { Command } from '../commands.ts';
import { BackendOut, MrOut, MwOut, PcapOut } from './shared.ts';

/** a journal entry's command (typed loosely here: the Command union is built from this table) */
const JournalCommand: z.ZodType<{ cmd: string; args: Record<string, unknown> }> = z.lazy(() => Command as unknown as z.ZodType<{ cmd: string; args: Record<string, unknown> }>);

export const TrafficOut = z.object({
  on: z.boolean(), qp: z.number(), cq: z.number(), wrs: z.number(), posted: z.number(), completed: z.number(), stopped: z.string().optional(),
});
export const AutorunOut = z.object({ on: z.boolean(), stepsPerSecond: z.number(), free: z.boolean() });

export const sessionCommands = {
  'session.info': command({
    args: () => ({}),
    result: z.object({
      seed: z.number(), epoch: z.number(), nowNs: RU64, napiVersion: z.number(), profiles: z.array(z.string()),
      // MRs and MWs carry their description (PD, keys, range, access, kind, state): a console that connects late or
      // after a host restart shows them as they are, not only as their ObjectCreated events describe them
      objects: z.array(z.object({ handle: RHandle, kind: z.string(), device: RHandle, info: z.union([MrOut, MwOut]).optional() })),
      autorun: AutorunOut, realTime: z.boolean(), network: z.array(RHandle), traffic: TrafficOut.nullable(),
      eventSeq: z.number(),   // events the device produced so far (seq of the last one)
      backend: BackendOut.optional(),
    }),
    readOnly: true, recorded: false,
  }),
  // a fresh session: on the software devices, or (backend 'ibverbs') on one device of libibverbs.so.1 opened with
  // dlopen (the library: VERBSLAB_LIBIBVERBS where the host runs, never a path from the console); device: its name,
  // default the first listed. docs/real-devices.md
  'session.reset': command({
    args: () => ({
      seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
      backend: z.enum(['embedded', 'ibverbs']).optional(),   // absent: embedded
      device: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
    }),
    result: z.object({ seed: z.number(), epoch: z.number(), backend: BackendOut.optional() }),
  }),
  // device: the capture of that device's real network traffic (real IP/UDP headers) instead of the session's
  'pcap.get': command({
    args: (h) => ({ device: h('device').optional() }),
    result: PcapOut, readOnly: true, recorded: false,
  }),
  'journal.get': command({
    args: () => ({}),
    result: z.object({
      dir: z.string(), file: z.string(), entries: z.array(JournalCommand),
      skipped: z.array(z.object({ line: z.number(), reason: z.string() })),
    }),
    readOnly: true, recorded: false, answeredBy: 'host',
  }),
  // the device events the host sent most recently (a console that connects late draws what happened before)
  'events.recent': command({
    args: () => ({ max: z.number().int().min(1).max(50_000).default(10_000) }),
    result: z.object({ first: z.number(), count: z.number(), events: z.array(z.lazy(() => DeviceEvent)) }),
    readOnly: true, recorded: false, answeredBy: 'host',
  }),
};
