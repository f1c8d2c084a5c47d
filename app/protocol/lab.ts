// The lab file format (labs/<id>/lab.json): a guided lab on the software device. A lab names the question from
// practice it answers, its devices (as a scenario does), and ordered sections of steps. A step is text for people,
// the commands it runs (scenario steps: names, "$refs", "as", expectations), an optional check (read-only
// commands with expectations, evaluated after the step: the step turns green when every expectation of its commands
// and of its check holds), and "why": the rule and its public source (a spec section or a kernel function). What
// the device models rather than implements as vendors publish it is said in `modelled`.
// Flattened, a lab is a scenario (app/scenario/lab.ts): the same loader, runner and digest.
import { z } from 'zod';
import { DeviceDecl, Step } from './scenario.ts';

export const LAB_VERSION = 1;
export const LAB_ID_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const Id = z.string().regex(/^[a-z][a-z0-9_-]{0,47}$/, 'an id: lower-case letter, then [a-z0-9_-]');

export const Why = z.object({
  rule: z.string().min(1).max(2000),
  /** the public source: a spec section ("IBTA vol. 1 C10-72", "RFC 5040 §6.4") or a kernel file and function */
  source: z.string().min(1).max(500),
}).strict();

export const LabStep = z.object({
  id: Id,
  title: z.string().min(1).max(200),
  text: z.string().min(1).max(5000),
  run: z.array(Step).min(1).max(200),
  check: z.array(Step).max(50).optional(),
  why: Why,
  modelled: z.string().max(2000).optional(),
}).strict();
export type LabStep = z.infer<typeof LabStep>;

export const LabSection = z.object({
  id: Id,
  title: z.string().min(1).max(200),
  text: z.string().max(5000).optional(),
  steps: z.array(LabStep).min(1).max(100),
}).strict();

export const Lab = z.object({
  verbslab: z.literal('lab'),
  version: z.literal(LAB_VERSION),
  id: z.string().regex(LAB_ID_RE, 'a lab id: lower-case letter, then [a-z0-9_-]'),
  title: z.string().min(1).max(200),
  goal: z.string().min(1).max(2000),
  /** the question from practice the lab answers */
  question: z.string().min(1).max(2000),
  seed: z.number().int().min(0).max(2 ** 32 - 1).default(1),
  devices: z.array(DeviceDecl).min(1).max(16),
  sections: z.array(LabSection).min(1).max(50),
}).strict();
export type Lab = z.infer<typeof Lab>;
