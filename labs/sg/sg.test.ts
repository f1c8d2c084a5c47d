// The SG lab over the addon: the break table the TypeScript side reads agrees with the device's, strategies run
// and verify, refusals carry the device's error, bad input is refused without harm.
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../app/host/native.ts';
import { SG_BREAK, SG_BREAK_NAMES } from './schema.ts';
import { checkList, compare, sgCheck, sgGenerate, sgRun, SgError } from './sg.ts';

const addon = loadAddon();

describe('SG lab: the rule', () => {
  it('returns the SgBreak numbers and names the TypeScript table holds', () => {
    const seen = new Map<number, string>();
    const note = (m: ReturnType<typeof checkList>) => m.elements.forEach((e) => seen.set(e.why, e.reason));
    note(checkList(addon, [{ offset: 0, length: 4096 }, { offset: 8193, length: 10 }, { offset: 16384, length: 4096 }]));   // start, not_reached
    note(checkList(addon, [{ offset: 0, length: 4000 }, { offset: 8192, length: 4096 }]));                               // prev_end
    note(checkList(addon, [{ offset: 0, length: 4000 }, { offset: 8193, length: 4096 }]));                               // both
    note(checkList(addon, [{ offset: 0, length: 4096 }, { offset: 8192, length: 4096 }], 4096, 1));                      // page list full
    note(checkList(addon, [{ offset: 0, length: 1 }, { offset: 3, length: 1 }], 4096, 1, true));                         // entry limit
    for (const [name, v] of Object.entries(SG_BREAK)) {
      expect(seen.get(v), name).toBe(name);
      expect(SG_BREAK_NAMES[v]).toBe(name);
    }
    expect(seen.get(3)).toBe(SG_BREAK_NAMES[3]);
  });

  it('counts what ib_sg_to_pages maps, at the page size asked', () => {
    const sectors = [{ offset: 512, length: 512 }, { offset: 2048, length: 1024 }];
    expect(checkList(addon, sectors, 4096).mapped).toBe(1);
    const m = checkList(addon, sectors, 512);
    expect(m.mapped).toBe(2);
    expect(m.entries).toBe(3);
    expect(m.firstBreak).toBeNull();
  });

  it('refuses bad input with a clear error and keeps working', () => {
    expect(() => sgCheck(addon, { sg: [], pageSize: 4096 })).toThrow();
    expect(() => sgCheck(addon, { sg: [{ addr: 0, length: 1 }], pageSize: 3000 })).toThrow(/power of two/);
    expect(() => (addon as unknown as { sgCheck(a: unknown): unknown }).sgCheck({ sg: 'x' })).toThrow(TypeError);
    expect(() => sgGenerate(addon, { pattern: 'aligned4k', n: 4, total: 4096 })).toThrow(SgError);
    expect(() => sgGenerate(addon, { pattern: 'nope', n: 4, total: 4096 })).toThrow();
    expect(sgGenerate(addon, { pattern: 'random', n: 4, total: 4096, seed: 2 })).toHaveLength(4);
  });
});

describe('SG lab: the strategies', () => {
  const list = sgGenerate(addon, { pattern: 'random', n: 16, total: 16 * 4096, seed: 3 });
  const bytes = list.reduce((n, e) => n + e.length, 0);

  it('compares the five on a gapped list: fast-reg refused where it breaks, the others verified or refused with why', () => {
    const c = compare(addon, list, { pairsQd1: 2, pairsQd32: 4 });
    const row = (s: string) => c.rows.find((r) => r.strategy === s)!;
    expect(c.check.mapped).toBeLessThan(16);
    expect(row('fast_reg').outcome).toBe('refused');
    expect(row('fast_reg').err).toBe(22);
    expect(row('fast_reg').firstBreak).toBe(c.check.firstBreak);
    expect(row('pool512').outcome).toBe('refused');
    for (const s of ['bounce', 'multi_mr', 'indirect']) {
      expect(row(s).outcome, row(s).msg).toBe('ok');
      expect(row(s).verified).toBe(true);
      expect(row(s).throughputQd32?.bytesPerDeviceSecond).toBeGreaterThan(0);
    }
    expect(row('indirect').perPair?.bytesCopied).toBe(0);
    expect(row('indirect').perPair?.keysOnWire).toBe(2);
    expect(row('bounce').perPair?.bytesCopied).toBe(2 * bytes);
    expect(row('multi_mr').perPair!.keysOnWire).toBeGreaterThan(2);
  });

  it('enforces the indirect entry limit with the device error', () => {
    const s = new addon.Session(1);
    try {
      const r = sgRun(s, { list, strategy: 'indirect', config: { maxNumSg: 8 } });
      expect(r.err).toBe(22);
      expect(r.mapped).toBe(8);
      expect(r.firstBreak).toBe(8);
      expect(r.breakWhy).toBe(SG_BREAK.entry_limit);
      expect(r.counters.iosDone).toBe(0);
      const rxe = sgRun(s, { list, strategy: 'indirect', config: { profile: 'rxe' } });
      expect(rxe.err).toBe(95);
      expect(rxe.msg).toMatch(/IB_MR_TYPE_SG_GAPS/);
    } finally { s.close(); }
  });
});
