// The labs extension of the backend host (HostCore.register / onEvents): lab.list, lab.get, lab.start, lab.step,
// lab.status (descriptors in app/protocol/commands/lab.ts). A started lab is its flattened scenario
// (app/scenario/lab.ts) driven by the scenario runner through the host's own execution path: every command a step
// runs reaches the real device, is journaled, streams its events to every console and is recorded by the scenario
// recorder, like anything a person does. A step is green when every expectation of its commands and of its check
// held. Steps run in order; "do it" on a later step runs the earlier ones first.
import type { Command, CommandArgs, DeviceEvent, ResultOf } from '../protocol/index.ts';
import type { ExecResult, Executor } from './api.ts';
import type { HostCore } from './core.ts';
import { ScenarioRun } from '../scenario/run.ts';
import { LABS_DIR, labResults, listLabs, type FlatLab } from '../scenario/lab.ts';
import { seenByHand, stepSignature } from '../scenario/lab-watch.ts';

/** events of commands the lab did not run (the other panels, a script), watched for steps done by hand: the newest
 *  HAND_EVENTS are kept */
const HAND_EVENTS = 200_000;
interface Active { flat: FlatLab; run: ScenarioRun; events: DeviceEvent[]; capturing: boolean; setupError?: string; hand: DeviceEvent[] }
type Status = ResultOf<'lab.status'>;
const err = (code: string, message: string, field?: string) => ({ ok: false as const, error: { code, message, ...(field ? { field } : {}) } });

export class LabsHost {
  private active: Active | null = null;

  constructor(readonly core: HostCore, readonly dir = LABS_DIR) {
    core.onEvents((evs) => {
      const act = this.active;
      if (!act) return;
      if (act.capturing) { for (const e of evs) act.events.push(e); return; }
      for (const e of evs) act.hand.push(e);     // by hand: lab-watch.ts looks for the steps' outcomes in these
      if (act.hand.length > HAND_EVENTS) act.hand.splice(0, act.hand.length - HAND_EVENTS);
    });
    core.register({
      name: 'lab.list',
      handler: () => {
        const { labs, errors } = listLabs(this.dir);
        if (!labs.length && errors.length) return err('BAD_LAB', errors.join('; '));
        return { ok: true, result: { labs: labs.map((f) => ({ id: f.lab.id, title: f.lab.title, goal: f.lab.goal, question: f.lab.question, steps: f.steps.length })) } };
      },
    });
    core.register({
      name: 'lab.get',
      handler: (c) => {
        const f = this.find(c.args.id);
        return 'error' in f ? f : { ok: true, result: { lab: { ...f.flat.lab } } };
      },
    });
    core.register({ name: 'lab.start', handler: (c) => this.start(c.args) });
    core.register({ name: 'lab.step', handler: (c) => this.step(c.args) });
    core.register({ name: 'lab.status', handler: (c) => ({ ok: true, result: this.status(c.args.id) }) });
  }

  private find(id: string): { flat: FlatLab } | ReturnType<typeof err> {
    const { labs, errors } = listLabs(this.dir);
    const flat = labs.find((l) => l.lab.id === id);
    if (flat) return { flat };
    const broken = errors.find((e) => e.includes(`/${id}/`));
    return broken ? err('BAD_LAB', broken, 'args.id') : err('ENOENT', `args.id: no lab "${id}" (labs: ${labs.map((l) => l.lab.id).join(', ') || 'none'})`, 'args.id');
  }

  /** The runner's executor: the host's execute (journal, events to the consoles, recorder) and the events of the
   *  commands it ran. */
  private adapter(a: () => Active): Executor {
    const core = this.core;
    return {
      exec(c: Command): ExecResult {
        const act = a();
        act.capturing = true;
        try { return core.execute(c); } finally { act.capturing = false; }
      },
      drainEvents(): DeviceEvent[] { const act = a(); const evs = act.events; act.events = []; return evs; },
      pcap: () => core.executor.pcap(),
      close() { /* the host owns the session */ },
    };
  }

  private start(a: CommandArgs<'lab.start'>) {
    const f = this.find(a.id);
    if ('error' in f) return f;
    const act: Active = { flat: f.flat, run: null as unknown as ScenarioRun, events: [], capturing: false, hand: [] };
    act.run = new ScenarioRun(f.flat.scenario, this.adapter(() => act));
    this.active = act;
    // a fresh session with the lab's devices (session.reset: the journal starts over with the lab)
    act.capturing = true;
    try { if (!act.run.begin()) act.setupError = act.run.failure?.why; } finally { act.capturing = false; }
    act.hand = [];
    return { ok: true as const, result: this.status(a.id) };
  }

  private step(a: CommandArgs<'lab.step'>) {
    const act = this.active;
    if (!act || act.flat.lab.id !== a.id) return err('ENOENT', `lab "${a.id}" is not started (lab.start first)`, 'args.id');
    const idx = act.flat.owner.map((o, i) => (o === a.step ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) return err('ENOENT', `args.step: lab "${a.id}" has no step "${a.step}" (steps: ${act.flat.steps.map((s) => s.id).join(', ')})`, 'args.step');
    const last = idx[idx.length - 1]!;
    act.run.runTo(last + 1);   // earlier steps first; stops at the first expectation that does not hold
    const st = this.status(a.id);
    return { ok: true as const, result: { ...st, ran: st.steps.find((s) => s.id === a.step)! } };
  }

  private status(id: string): Status {
    const act = this.active;
    if (!act || act.flat.lab.id !== id) {
      const f = this.find(id);
      const steps = 'flat' in f ? f.flat.steps.map((s) => ({ id: s.id, done: false, holds: false, failures: [] as string[], byHand: false, watchable: stepSignature(s).length > 0 })) : [];
      return { id, started: false, steps };
    }
    const rep = act.run.report();
    const results = labResults(act.flat, rep);
    const hand = seenByHand(act.flat.steps, act.hand);
    return {
      id, started: true,
      steps: results.map((r, i) => {
        const mine = rep.steps.filter((s) => act.flat.owner[s.index] === r.id);
        const bad = mine.find((s) => !s.ok);
        const byHand = !r.ran && hand[i]!.seen;   // "Do it" decides a step it ran; otherwise its outcome seen by hand
        return {
          id: r.id, done: r.ran || byHand, holds: r.passed || byHand, byHand, watchable: hand[i]!.watchable,
          failures: bad ? bad.failures.map((x) => `${bad.cmd}: ${x}`) : act.setupError ? [act.setupError] : [],
          ...(bad?.error ? { error: bad.error } : {}),
        };
      }),
    };
  }
}

/** The host extension entry point (app/host/main.ts). */
export function attach(core: HostCore, dir?: string): LabsHost { return new LabsHost(core, dir); }
