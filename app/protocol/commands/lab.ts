// Console commands of the labs extension (app/host/labs.ts): list the labs of labs/, start one, run a step's
// commands through the host (journaled like anything a person does), and which steps' checks hold (or, for a step
// done by hand in the other panels, whose outcome was seen in the event stream).
import { z } from 'zod';
import { command } from '../descriptor.ts';

const LabId = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a lab id: lower-case letter, then [a-z0-9_-]');
const StepId = z.string().regex(/^[a-z][a-z0-9_-]{0,47}$/, 'a step id: lower-case letter, then [a-z0-9_-]');
const host = { answeredBy: 'host', step: false, recorded: false } as const;

export const LabSummary = z.object({ id: z.string(), title: z.string(), goal: z.string(), question: z.string(), steps: z.number() });
export const StepStatus = z.object({
  id: z.string(), done: z.boolean(), holds: z.boolean(), failures: z.array(z.string()),
  /** the step was not run by "Do it": its outcome was seen in the event stream (app/scenario/lab-watch.ts) */
  byHand: z.boolean(),
  /** the step has an outcome that can be seen by hand (a completion, a packet, a key state) */
  watchable: z.boolean(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export const LabStatus = z.object({ id: z.string(), started: z.boolean(), steps: z.array(StepStatus) });

export const labCommands = {
  'lab.list': command({ ...host, args: () => ({}), result: z.object({ labs: z.array(LabSummary) }) }),
  'lab.get': command({ ...host, args: () => ({ id: LabId }), result: z.object({ lab: z.record(z.string(), z.unknown()) }) }),
  'lab.start': command({ ...host, args: () => ({ id: LabId }), result: LabStatus }),
  'lab.step': command({ ...host, args: () => ({ id: LabId, step: StepId }), result: LabStatus.extend({ ran: StepStatus }) }),
  'lab.status': command({ ...host, args: () => ({ id: LabId }), result: LabStatus }),
};
