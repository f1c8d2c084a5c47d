// Labs (labs/<id>/lab.json, format in app/protocol/lab.ts): load and validate a lab, flatten it into a scenario
// (each lab step's commands, then its check), and run it headless. The console's labs extension
// (app/host/labs.ts) runs the same flattened scenario step by step through the backend host.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lab, type LabStep } from '../protocol/lab.ts';
import { createsOf, describeZodError, isReadOnly } from '../protocol/index.ts';
import { SCENARIO_VERSION, type Scenario } from '../protocol/scenario.ts';
import { validateScenario } from './load.ts';
import type { ScenarioReport } from './run.ts';

export const LABS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../labs');

/** A lab flattened into a scenario: `owner[i]` is the lab step scenario step i belongs to. */
export interface FlatLab { lab: Lab; scenario: Scenario; owner: string[]; steps: (LabStep & { section: string })[] }
export type LabLoad = { ok: true; flat: FlatLab } | { ok: false; error: string };

/** Validate a lab object and flatten it (names and references are checked by the scenario loader). */
export function flattenLab(data: unknown, file = 'lab.json'): LabLoad {
  const p = Lab.safeParse(data);
  if (!p.success) { const d = describeZodError(p.error); return { ok: false, error: `${file}: ${d.message}` }; }
  const lab = p.data;
  const steps: FlatLab['steps'] = [];
  const owner: string[] = [];
  const flat: unknown[] = [];
  const ids = new Set<string>();
  for (const sec of lab.sections) {
    for (const st of sec.steps) {
      if (ids.has(st.id)) return { ok: false, error: `${file}: step id "${st.id}" is used twice` };
      ids.add(st.id);
      for (const [k, c] of (st.check ?? []).entries()) {
        const cmd = String((c as { cmd: unknown }).cmd);
        if (!isReadOnly(cmd)) return { ok: false, error: `${file}: step ${st.id}: check.${k}: ${cmd} changes state; a check only reads (qp.query, memory.read)` };
      }
      steps.push({ ...st, section: sec.id });
      for (const c of [...st.run, ...(st.check ?? [])]) { flat.push(c); owner.push(st.id); }
    }
  }
  const sc = { verbslab: 'scenario', version: SCENARIO_VERSION, name: lab.title, description: lab.goal, seed: lab.seed, devices: lab.devices, steps: flat };
  const v = validateScenario(sc, file);
  if (!v.ok) {
    const at = v.error.step ? ` (lab step ${owner[v.error.step - 1]})` : '';
    return { ok: false, error: `${file}${at}: ${v.error.message}` };
  }
  return { ok: true, flat: { lab, scenario: v.scenario, owner, steps } };
}

/** The labs of a directory (each labs/<id>/lab.json), sorted by id; a broken lab is reported, not thrown. */
export function listLabs(dir = LABS_DIR): { labs: FlatLab[]; errors: string[] } {
  const labs: FlatLab[] = []; const errors: string[] = [];
  if (!fs.existsSync(dir)) return { labs, errors };
  for (const id of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, id, 'lab.json');
    if (!fs.existsSync(file)) continue;
    let data: unknown;
    try { data = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { errors.push(`${file}: not JSON: ${(e as Error).message}`); continue; }
    const r = flattenLab(data, path.relative(process.cwd(), file) || file);
    if (!r.ok) { errors.push(r.error); continue; }
    if (r.flat.lab.id !== id) { errors.push(`${file}: id "${r.flat.lab.id}" differs from its folder "${id}"`); continue; }
    labs.push(r.flat);
  }
  return { labs, errors };
}

export interface LabStepResult {
  id: string; section: string; title: string; passed: boolean; ran: boolean; failure?: string;
  /** results of the step's commands that the lab names with "as" and that create no object (a lab's outputs, e.g.
   *  the SG lab's comparison table), by name */
  outputs?: Record<string, unknown>;
}
/** Per lab step, from the flattened scenario's report: passed when every one of its scenario steps ran and held. */
export function labResults(flat: FlatLab, rep: ScenarioReport): LabStepResult[] {
  return flat.steps.map((st) => {
    const mine = rep.steps.filter((r) => flat.owner[r.index] === st.id);
    const total = flat.owner.filter((o) => o === st.id).length;
    const bad = mine.find((r) => !r.ok);
    const setup = rep.failedStep === 0 ? rep.failure : undefined;
    const outputs: Record<string, unknown> = {};
    for (const r of mine) {
      const as = (flat.scenario.steps[r.index] as { as?: string }).as;
      if (as && r.ok && !createsOf(r.cmd)) outputs[as] = r.result;
    }
    return {
      id: st.id, section: st.section, title: st.title, ran: mine.length === total, passed: mine.length === total && !bad && !setup,
      ...(Object.keys(outputs).length ? { outputs } : {}),
      ...(bad ? { failure: `${bad.cmd}: ${bad.failures.join('; ')}` } : setup ? { failure: setup } : mine.length < total ? { failure: 'not run (an earlier step failed)' } : {}),
    };
  });
}
