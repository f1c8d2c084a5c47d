// Lab 2 beyond its steps, headless (`verbslab lab run cq` calls headless() after the lab's steps): the interleaving
// explorer over every variant; the lab passes only if each variant gets the verdict it expects.
import type { LabAgentResult } from '../../app/scenario/lab-cli.ts';
import { formatLab, runLab } from './run.ts';

export const SEEDS = 200;

export function headless(): LabAgentResult {
  const r = runLab(SEEDS);
  return { passed: r.pass, lines: formatLab(r).split('\n'), result: r };
}
