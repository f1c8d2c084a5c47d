// Exported scenarios run on the software device through its libibverbs.so.1: every library scenario (scenarios/,
// labs/<id>/scenarios/; app/scenario/library.ts) is exported
// to C (app/scenario/export-c.ts), compiled against Debian's <infiniband/verbs.h> with -libverbs, and run with the
// environment `verbslab exec` sets (exec.ts libEnv: build/libibverbs first in LD_LIBRARY_PATH). The exported program
// prints PASS / FAIL per expectation and stops at the first FAIL.
//
// The device has the scenario's profile when all its devices share one (VERBSLAB_PROFILE). The headless run steps virtual time; the exported program runs in real time against a device that progresses on its
// own, and some steps have no libibverbs form. KNOWN lists the scenarios whose exported program cannot pass here and
// why (docs/libibverbs.md); each must fail at the step given, so the list stays true. A QP state the scenario expects
// after an asynchronous outcome (a NAK, retries exhausted) is waited for with a deadline (preamble.h wait_qp_state),
// where the headless run had run the engine to idle.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScenarioText } from '../scenario/load.ts';
import { exportC } from '../scenario/export-c.ts';
import { libEnv } from './exec.ts';
import { libraryFiles } from '../scenario/library.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Known { step: number; why: string }
const REG_MR = 'IB_WR_REG_MR is kernel-only: the exported program cannot post it, so its completion never comes';
const READ_INV = 'IB_WR_RDMA_READ_WITH_INV is kernel-only (libibverbs has no IBV_WR_ for it): the exported program cannot post it, so its completion never comes';
const CAPTURE = 'export-c cannot express the "$old" capture of the keys before ibv_rereg_mr, so the WRITE with the old rkey is not posted';
export const KNOWN: Record<string, Known> = {
  fastreg_local_inv: { step: 16, why: REG_MR },
  rxe_fence_local_inv: { step: 16, why: REG_MR },
  rxe_fence_local_inv_cx: { step: 16, why: REG_MR },
  rxe_local_inv_other_pd: { step: 20, why: REG_MR },
  rxe_local_inv_other_pd_cx: { step: 20, why: REG_MR },
  rxe_reg_mr_wr_access: { step: 16, why: REG_MR },
  rxe_reg_mr_wr_access_cx: { step: 16, why: REG_MR },
  iwarp_read_with_inv: { step: 17, why: REG_MR },
  read_with_inv_on_roce: { step: 14, why: READ_INV },
  rxe_mr_rereg_keys: { step: 15, why: CAPTURE },
  // the cm.* steps drive the device's own CM (Session::cm_*); a program connects through librdmacm instead, which
  // export-c does not write yet: the QPs stay in RESET, so the first post.recv fails
  rdma_cm_connect: { step: 18, why: 'the cm.* steps (the device CM) are exported as notes, not as librdmacm calls: the QPs are never connected' },
  rxe_mr_rereg_keys_cx: { step: 15, why: CAPTURE },
  smbd_read_send_with_inv: { step: 20, why: REG_MR },
  profile_capability_errors: { step: 2, why: 'the scenario uses devices of several profiles; a program sees one device of one profile (VERBSLAB_PROFILE)' },
};

export interface CaseResult { name: string; ok: boolean; detail: string; passes: number; failStep?: number; output?: string }

export function runExportedScenarios(files = libraryFiles()): CaseResult[] {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-exec-c-'));
  const out: CaseResult[] = [];
  try {
    for (const file of files) {
      const f = path.basename(file);
      const name = f.replace(/\.json$/, '');
      const loaded = parseScenarioText(fs.readFileSync(file, 'utf8'), f);
      if (!loaded.ok) { out.push({ name, ok: false, detail: `not loadable: ${loaded.error.message}`, passes: 0 }); continue; }
      const src = path.join(work, `${name}.c`), bin = path.join(work, name);
      fs.writeFileSync(src, exportC(loaded.scenario, { source: path.relative(root, file) }));
      const cc = spawnSync('gcc', ['-Wall', '-Werror', '-o', bin, src, '-libverbs'], { encoding: 'utf8' });
      if (cc.status !== 0) { out.push({ name, ok: false, detail: 'gcc failed', passes: 0, output: cc.stderr.slice(-2000) }); continue; }
      // the device's profile: the scenario's, when all its devices share one (a program sees one device)
      const profiles = new Set<string>();
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { if (k === 'profile' && typeof x === 'string') profiles.add(x); else walk(x); }
      };
      walk(loaded.scenario);
      const env: Record<string, string> = profiles.size === 1 ? { VERBSLAB_PROFILE: [...profiles][0] } : {};
      const r = spawnSync(bin, [], { encoding: 'utf8', env: libEnv(env), timeout: 30_000 });
      const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
      const passes = text.split('\n').filter((l) => l.startsWith('PASS')).length;
      const failLine = text.split('\n').find((l) => l.startsWith('FAIL'));
      const failStep = failLine ? Number(/^FAIL step (\d+)/.exec(failLine)?.[1]) : undefined;
      const clean = r.status === 0 && !failLine && passes > 0;
      const k = KNOWN[name];
      let ok: boolean, detail: string;
      if (!k) { ok = clean; detail = clean ? `${passes} expectations PASS` : `exit ${r.status ?? r.signal}: ${failLine ?? 'no FAIL line'}`; }
      else if (clean) { ok = false; detail = `passes now: remove it from KNOWN (${k.why})`; }
      else { ok = failStep === k.step; detail = ok ? `fails at step ${k.step} as listed: ${k.why}` : `expected to fail at step ${k.step}, got: ${failLine ?? `exit ${r.status ?? r.signal}`}`; }
      out.push({ name, ok, detail, passes, failStep, ...(ok ? {} : { output: text.slice(-2000) }) });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const res = runExportedScenarios();
  for (const r of res) console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name.padEnd(38)} ${r.detail}`);
  console.log(JSON.stringify({ passed: res.filter((r) => r.ok).length, failed: res.filter((r) => !r.ok).length }));
  process.exitCode = res.every((r) => r.ok) ? 0 : 1;
}
