// The C++ and TypeScript enum tables agree: native/tools/vl_tables.cpp (compiled here with g++ against the
// device's own headers) prints every table of native/include/vl/names.h and the wire codec's BTH opcode names;
// each must equal its mirror in app/protocol, entry for entry. (The rdma-core values themselves are checked against
// <infiniband/verbs.h> at compile time: native/tests/verbs_h_test.cpp.)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as enums from './enums.ts';
import { BthOpcode, bthOpcodeName } from './bth.ts';
import { EVENT_KINDS, OBJ_KINDS } from './eventframe.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
type Entries = [number, string][];
let cpp: { tables: Record<string, Entries>; bth: Entries };

beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-tables-'));
  try {
    const exe = path.join(dir, 'vl_tables');
    execFileSync(process.env.CXX || 'g++', ['-std=c++20', '-Wall', '-Wextra', '-Werror', '-I', 'native/include', '-I', 'native/src',
      'native/tools/vl_tables.cpp', 'native/src/wire/opcodes.cpp', '-o', exe], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    cpp = JSON.parse(execFileSync(exe, { encoding: 'utf8' }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

/** a TS table's entries, by value then name */
const entriesOf = (t: { values: Record<string, number> }): Entries =>
  Object.entries(t.values).map(([k, v]) => [v, k] as [number, string]).sort((x, y) => x[0] - y[0] || x[1].localeCompare(y[1]));
const sorted = (e: Entries) => [...e].sort((x, y) => x[0] - y[0] || x[1].localeCompare(y[1]));

const MIRRORED = ['WcStatus', 'WcOpcode', 'WcFlag', 'WrOpcode', 'SendFlag', 'Access', 'QpState', 'QpType', 'QpAttrMask',
  'EventType', 'MwType', 'Mtu', 'DeviceCap', 'AtomicCap', 'KeyState', 'Change', 'TimerReason', 'FaultKind',
  'NvmfStep', 'NvmfPass', 'CmMadDir', 'CmState', 'CmEvent', 'CmAttr'] as const;

describe('C++ and TypeScript tables', () => {
  it('every C++ table has a mirror here and nothing is left over', () => {
    expect(Object.keys(cpp.tables).sort()).toEqual([...MIRRORED, 'EventKind', 'ObjKind'].sort());
  });

  it.each(MIRRORED)('%s: the same names with the same values', (name) => {
    const ts = (enums as unknown as Record<string, { values: Record<string, number> }>)[name]!;
    expect(entriesOf(ts)).toEqual(sorted(cpp.tables[name]!));
  });

  it('event kinds and object kinds: the frame layout indexes them as the device numbers them', () => {
    expect(EVENT_KINDS.map((n, i) => [i, n])).toEqual(sorted(cpp.tables.EventKind!));
    expect(OBJ_KINDS.map((n, i) => [i, n])).toEqual(sorted(cpp.tables.ObjKind!));
  });

  it('BTH opcodes: the ones the wire codec knows, each with the codec\'s (Wireshark\'s) name', () => {
    expect(Object.values(BthOpcode).sort((x, y) => x - y)).toEqual(cpp.bth.map(([v]) => v));
    for (const [v, name] of cpp.bth) expect(bthOpcodeName(v)).toBe(name);
    expect(bthOpcodeName(0x13)).toBe('RC Compare Swap');   // the one spelling (the console once said "CmpSwap")
    expect(bthOpcodeName(0x15)).toBe('Unknown opcode');
  });
});
