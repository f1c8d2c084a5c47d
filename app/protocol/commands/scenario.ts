// Console-only commands of the scenario recorder/replayer, answered by the backend host's recorder extension
// (app/host/recorder.ts), not by the device. They are not scenario steps (a scenario does not load or step another
// one). Step numbers are 1-based, as in every scenario message.
// Their results are the recorder's state objects: typed here as open records (not yet a schema per field).
import { z } from 'zod';
import { command } from '../descriptor.ts';
import { Addr } from './shared.ts';

const StepNo = z.number().int().min(1).max(100_000);
const State = z.record(z.string(), z.unknown());
const host = { result: State, answeredBy: 'host', step: false, recorded: false } as const;

export const scenarioConsoleCommands = {
  // known: the version the client already shows; when nothing changed since, only { version } comes back
  'scenario.get': command({ ...host, args: () => ({ known: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() }) }),
  'scenario.save': command({ ...host, args: () => ({}) }),
  'scenario.rename': command({ ...host, args: () => ({ from: z.string().min(1).max(64), to: z.string().min(1).max(64) }) }),
  'scenario.note': command({ ...host, args: () => ({ step: StepNo, note: z.string().max(2000) }) }),
  'scenario.remove': command({ ...host, args: () => ({ step: StepNo }) }),
  'scenario.meta': command({ ...host, args: () => ({ name: z.string().min(1).max(200).optional(), description: z.string().max(20_000).optional() }) }),
  'scenario.expect': command({
    ...host,
    args: (h) => ({
      step: StepNo,
      only: z.number().int().min(0).max(4095).optional(),
      bytes: z.object({ addr: Addr, length: z.number().int().min(1).max(4096) }).strict().optional(),
      qp: h('qp').optional(),
      packets: z.boolean().optional(),       // the packets the device sent during the step
      asyncEvents: z.boolean().optional(),   // the async events it raised during the step
    }),
  }),
  'scenario.load': command({ ...host, args: () => ({ text: z.string().max(6 * 1024 * 1024), file: z.string().max(200).optional() }) }),
  'scenario.step': command({ ...host, args: () => ({}) }),
  'scenario.run_to': command({ ...host, args: () => ({ step: StepNo }) }),
  'scenario.close': command({ ...host, args: () => ({}) }),
};
