// Lab 3's wire captures in tshark: every scenario of labs/bmme/scenarios and the lab itself (flattened, headless)
// run on the software device, its session pcap goes through tshark with native/tests/tshark/icrc_check.lua (an
// ICRC computed with no code shared with the device: rxe_icrc.c's formulation), and every frame must decode as
// InfiniBand (a BTH opcode) with a good ICRC. Needs tshark on PATH (a Debian test dependency): fails without it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { executorFactory, repoRoot } from './testlib.ts';
import { runScenario } from './run.ts';
import { listLabs } from './lab.ts';
import type { Scenario } from '../protocol/scenario.ts';

const make = await executorFactory('tshark ICRC of lab 3 captures');
const LUA = path.join(repoRoot, 'native/tests/tshark/icrc_check.lua');
const DIR = path.join(repoRoot, 'labs/bmme/scenarios');

interface Row { frame: string; opcode: string; status: string }

/** Runs `sc`, writes the session pcap, and reads each frame's BTH opcode and ICRC status back through tshark. */
function capture(sc: Scenario | string, file: string): { rows: Row[]; packets: number; passed: boolean; why?: string } {
  const ex = make(1);
  try {
    const rep = runScenario(sc as Scenario, ex, { file });
    const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vl-icrc-')), 'cap.pcap');
    fs.writeFileSync(tmp, ex.pcap());
    const r = spawnSync('tshark', ['-X', `lua_script:${LUA}`, '-r', tmp, '-T', 'fields', '-E', 'separator=/t',
      '-e', 'frame.number', '-e', 'infiniband.bth.opcode', '-e', 'icrc_check.status'], { encoding: 'utf8' });
    fs.rmSync(path.dirname(tmp), { recursive: true, force: true });
    if (r.error || r.status !== 0) throw new Error(`tshark failed: ${r.error?.message ?? r.stderr}`);
    const rows = r.stdout.split('\n').filter(Boolean).map((l) => { const [frame, opcode, status] = l.split('\t'); return { frame: frame!, opcode: opcode ?? '', status: status ?? '' }; });
    return { rows, packets: rep.packets, passed: rep.passed, ...(rep.failure ? { why: rep.failure } : {}) };
  } finally { ex.close(); }
}

const tshark = spawnSync('tshark', ['--version'], { encoding: 'utf8' });

describe('lab 3 captures decode in tshark with good ICRC', () => {
  it('tshark is installed (the check cannot be skipped silently)', () => {
    expect(tshark.status, 'tshark not found on PATH: apt-get install -y tshark').toBe(0);
  });
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
  it.each(files)('%s', (f) => {
    const c = capture(fs.readFileSync(path.join(DIR, f), 'utf8'), f);
    expect(c.passed, c.why).toBe(true);
    expect(c.rows.length).toBe(c.packets);
    for (const r of c.rows) {
      expect(r.opcode, `frame ${r.frame}: not decoded as InfiniBand`).not.toBe('');
      expect(r.status, `frame ${r.frame} (BTH opcode ${r.opcode})`).toBe('good');
    }
  });
  it('the whole lab, headless', () => {
    const flat = listLabs().labs.find((l) => l.lab.id === 'bmme')!;
    const c = capture(flat.scenario, 'labs/bmme/lab.json');
    expect(c.passed, c.why).toBe(true);
    expect(c.rows.length).toBeGreaterThan(20);
    expect(c.rows.length).toBe(c.packets);
    expect(c.rows.filter((r) => r.status !== 'good' || !r.opcode)).toEqual([]);
  }, 60_000);
});
