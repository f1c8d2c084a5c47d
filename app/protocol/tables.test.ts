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
import { LAB_ENUMS } from './labs.ts';
import { WR_OPS } from './wr-ops.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
type Entries = [number, string][];
let cpp: { tables: Record<string, Entries>; bth: Entries; wrOps: [number, number, number][] };

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

const PLATFORM = ['WcStatus', 'WcOpcode', 'WcFlag', 'WrOpcode', 'SendFlag', 'Access', 'QpState', 'QpType', 'QpAttrMask',
  'EventType', 'MwType', 'Mtu', 'DeviceCap', 'AtomicCap', 'KeyState', 'Change', 'TimerReason', 'FaultKind',
  'CmMadDir', 'CmState', 'CmEvent', 'CmAttr'] as const;
/** the platform's tables (enums.ts) and every lab's (its manifest's `enums`, by C++ name) */
const TABLES: Record<string, { values: Record<string, number> }> = {
  ...Object.fromEntries(PLATFORM.map((n) => [n, (enums as unknown as Record<string, { values: Record<string, number> }>)[n]!])), ...LAB_ENUMS,
};
const MIRRORED = Object.keys(TABLES);

describe('C++ and TypeScript tables', () => {
  it('every C++ table has a mirror here and nothing is left over', () => {
    expect(Object.keys(cpp.tables).sort()).toEqual([...MIRRORED, 'EventKind', 'ObjKind'].sort());
  });

  it.each(MIRRORED)('%s: the same names with the same values', (name) => {
    expect(entriesOf(TABLES[name]!)).toEqual(sorted(cpp.tables[name]!));
  });

  it('event kinds and object kinds: the frame layout indexes them as the device numbers them', () => {
    expect(EVENT_KINDS.map((n, i) => [i, n])).toEqual(sorted(cpp.tables.EventKind!));
    expect(OBJ_KINDS.map((n, i) => [i, n])).toEqual(sorted(cpp.tables.ObjKind!));
  });

  it('send opcodes: the console\'s table (wr-ops.ts) has the device\'s rows and QP types (core/wr_info.h)', () => {
    const BIT = { IBV_QPT_RC: 1, IBV_QPT_UC: 2, IBV_QPT_UD: 4 } as const;
    const ts = Object.entries(WR_OPS).map(([name, o]) => [enums.WrOpcode.values[name as keyof typeof WR_OPS], o.qpTypes.reduce((m, t) => m | BIT[t], 0)]);
    expect(ts.sort((a, b) => a[0]! - b[0]!)).toEqual(cpp.wrOps.map(([op, types]) => [op, types]));
  });

  it('BTH opcodes: the ones the wire codec knows, each with the codec\'s (Wireshark\'s) name', () => {
    expect(Object.values(BthOpcode).sort((x, y) => x - y)).toEqual(cpp.bth.map(([v]) => v));
    for (const [v, name] of cpp.bth) expect(bthOpcodeName(v)).toBe(name);
    expect(bthOpcodeName(0x13)).toBe('RC Compare Swap');   // the one spelling (the console once said "CmpSwap")
    expect(bthOpcodeName(0x15)).toBe('Unknown opcode');
  });
});
