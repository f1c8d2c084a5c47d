// The SG lab's host agent: the commands a guided step (or a person in the console) runs — sg.generate, sg.check,
// sg.run, sg.compare — with their argument and result schemas, answered over the addon. Strategy runs use a
// private session each (their devices, QPs and MRs are created and destroyed inside the run), so the console's
// session, its handles and its journal are exactly as they were: a replay does not depend on them.
import { z } from 'zod';
import type { NativeAddon } from '../../app/host/native.ts';
import type { SgElem, SgListSpec } from './schema.ts';
import { SG_COMMANDS } from './schema-commands.ts';
import { checkList, compare, sgGenerate, sgRun, SgError } from './sg.ts';

const ERRNO: Record<number, string> = { 12: 'ENOMEM', 16: 'EBUSY', 22: 'EINVAL', 95: 'EOPNOTSUPP', 5: 'EIO', 71: 'EPROTO' };

export type SgCommandName = keyof typeof SG_COMMANDS;
export const isSgCommand = (name: string): name is SgCommandName => name in SG_COMMANDS;

export type SgReply = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };

function resolve(addon: NativeAddon, spec: SgListSpec): SgElem[] {
  return Array.isArray(spec) ? spec : sgGenerate(addon, spec.generate);
}

function zodMessage(e: z.ZodError): string {
  const i = e.issues[0];
  return i ? `${i.path.join('.') || 'args'}: ${i.message}` : 'invalid arguments';
}

/** Answers one SG command; bad input comes back as an error naming the field, never as a throw. */
export function handleSg(addon: NativeAddon, name: SgCommandName, raw: unknown): SgReply {
  try {
    switch (name) {
      case 'sg.generate': {
        const list = sgGenerate(addon, SG_COMMANDS[name].args.parse(raw));
        return { ok: true, result: { list, bytes: list.reduce((n, e) => n + e.length, 0) } };
      }
      case 'sg.check': {
        const a = SG_COMMANDS[name].args.parse(raw);
        return { ok: true, result: checkList(addon, resolve(addon, a.list), a.pageSize, a.maxNumSg, a.indirect) };
      }
      case 'sg.run': {
        const a = SG_COMMANDS[name].args.parse(raw);
        const s = new addon.Session(a.config.seed);
        try {
          s.set_event_capture(false);
          return { ok: true, result: sgRun(s, { list: resolve(addon, a.list), strategy: a.strategy, config: a.config }) };
        } finally { s.close(); }
      }
      case 'sg.compare': {
        const a = SG_COMMANDS[name].args.parse(raw);
        return { ok: true, result: compare(addon, resolve(addon, a.list), { profile: a.profile, seed: a.seed, mrPool: a.mrPool }) };
      }
    }
    return { ok: false, error: { code: 'EINVAL', message: `cmd: unknown SG command` } };
  } catch (e) {
    if (e instanceof z.ZodError) return { ok: false, error: { code: 'EINVAL', message: zodMessage(e) } };
    if (e instanceof SgError) return { ok: false, error: { code: ERRNO[e.err] ?? `E${e.err}`, message: e.message } };
    return { ok: false, error: { code: 'EINVAL', message: (e as Error).message } };
  }
}
