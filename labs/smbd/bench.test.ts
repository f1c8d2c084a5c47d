// The bench's two comparisons count what they claim to (no timing asserted: figures come from `verbslab bench`).
import { describe, expect, it } from 'vitest';
import { crossingBench, registrationBench } from './bench.ts';

describe('smbd bench', () => {
  it('pool vs per-I/O: same I/Os, one server registration vs one per I/O (and as many invalidations)', () => {
    const r = registrationBench(1, 2);
    expect(r.pool).toMatchObject({ ios: 4, serverRegistrations: 1, serverInvalidations: 0, serverPinnedBytes: 64 << 20, verified: 2 });
    expect(r.perIo).toMatchObject({ ios: 4, serverRegistrations: 4, serverInvalidations: 4, serverPinnedBytes: 1 << 20, verified: 2 });
    expect(r.ratio).toBeGreaterThan(0);
  }, 60_000);
  it('event crossings: one per event vs 64 events per crossing', () => {
    const c = crossingBench(256);
    expect(c.single.crossings).toBe(256);
    expect(c.batched).toMatchObject({ crossings: 4, perCrossing: 64 });
  });
});
