// The published JSON Schema (scenarios/scenario.schema.json) is generated from the zod schema and up to date;
// the SHA-256 used by the digest agrees with Node's.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE, schemaText } from './schema-file.ts';
import { sha256Hex, Sha256 } from './sha256.ts';
import { libraryFiles } from './library.ts';
import { HANDLE_FIELDS, ScenarioCommands, Scenario } from '../protocol/scenario.ts';
import { LAB_HANDLE_FIELDS } from '../protocol/labs.ts';
import { COMMAND_NAMES } from '../protocol/index.ts';
import { SCENARIO_COMMANDS } from '../protocol/scenario.ts';

describe('scenario JSON Schema', () => {
  it('scenarios/scenario.schema.json is up to date (regenerate: npx tsx app/scenario/schema-file.ts)', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
  });
  it('covers every protocol command', () => {
    expect([...SCENARIO_COMMANDS].sort()).toEqual([...COMMAND_NAMES].sort());
    const js = JSON.parse(schemaText());
    const text = JSON.stringify(js);
    for (const c of COMMAND_NAMES) expect(text).toContain(`"const":"${c}"`);
  });
  it('HANDLE_FIELDS is learned from the descriptors\' handle positions, each field naming one kind', () => {
    // the handle positions of the command schemas, as rdma-core's verbs name them (a kind per field name)
    // the platform's, then what each lab's manifest declares (labs/<id>/index.ts handleFields)
    expect(HANDLE_FIELDS).toEqual({
      device: 'device', destDevice: 'device', pd: 'pd', buffer: 'buffer', mr: 'mr', bindMr: 'mr', regMr: 'mr',
      mw: 'mw', cq: 'cq', sendCq: 'cq', recvCq: 'cq', srq: 'srq', qp: 'qp', peer: 'qp', ah: 'ah',
      ...LAB_HANDLE_FIELDS,
    });
    // and a handle position takes a name or a handle, never a reference
    const qp = ScenarioCommands.list.find((c) => c.shape.cmd.value === 'qp.create')!;
    expect(qp.shape.args.safeParse({ pd: 'pd0', sendCq: 'cq0', recvCq: 3, qpType: 'IBV_QPT_RC' }).success).toBe(true);
  });
});

describe('library files and the published schema', () => {
  it('every library file (and pending/) satisfies the zod Scenario schema the JSON Schema is generated from', () => {
    const files = libraryFiles();
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const r = Scenario.safeParse(JSON.parse(fs.readFileSync(f, 'utf8')));
      expect(r.success ? 'ok' : `${f}: ${JSON.stringify(r.error.issues[0])}`).toBe('ok');
    }
  });
});

describe('sha256', () => {
  it('matches node:crypto on block boundaries and incremental updates', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 70_000]) {
      const s = 'ab'.repeat(n).slice(0, n) + 'é';
      expect(sha256Hex(s)).toBe(createHash('sha256').update(s).digest('hex'));
    }
    const h = new Sha256().update('abc');
    const snap = h.clone().digestHex();
    h.update('def');
    expect(snap).toBe(createHash('sha256').update('abc').digest('hex'));
    expect(h.digestHex()).toBe(createHash('sha256').update('abcdef').digest('hex'));
  });
});
