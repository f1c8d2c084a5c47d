// verbslab bench --runs N: the figures are the medians of the runs, with their spread.
import { describe, expect, it } from 'vitest';

import { medianOfRuns } from './bench-median.mjs';

const run = (ratio: number, ops: number, udp: number, note: string) => ({
  rdma_write_1MiB_vs_memcpy: ratio, rdma_write_64B_ops_per_s: ops, udp_rdma_write_GBps: udp, udp_data_verified: true,
  raw: { note },
});

describe('medianOfRuns', () => {
  it('returns a single run unchanged', () => {
    const one = run(0.6, 3e6, 2.1, 'only');
    expect(medianOfRuns([one])).toBe(one);
  });

  it('takes each number\'s own median and keeps the spread in run order', () => {
    const out = medianOfRuns([run(0.7, 3.0e6, 2.4, 'a'), run(0.5, 3.9e6, 2.0, 'b'), run(0.6, 3.5e6, 1.1, 'c'),
      run(0.9, 2.0e6, 2.2, 'd'), run(0.65, 3.6e6, 2.3, 'e')]);
    expect(out.rdma_write_1MiB_vs_memcpy).toBe(0.65);
    expect(out.rdma_write_64B_ops_per_s).toBe(3.5e6);
    expect(out.udp_rdma_write_GBps).toBe(2.2);
    expect(out.runs).toBe(5);
    expect(out.spread?.udp_rdma_write_GBps).toEqual({ min: 1.1, max: 2.4, values: [2.4, 2.0, 1.1, 2.2, 2.3] });
    expect(out.spread?.udp_data_verified).toBeUndefined();   // not a number: taken from the median run
    expect(out.raw.note).toBe('e');                           // the detail is the median run's (by the 1 MiB ratio)
  });

  it('takes the lower middle value for an even number of runs', () => {
    const out = medianOfRuns([run(0.4, 1, 1, 'a'), run(0.8, 4, 4, 'b'), run(0.6, 2, 2, 'c'), run(0.7, 3, 3, 'd')]);
    expect(out.rdma_write_1MiB_vs_memcpy).toBe(0.6);
    expect(out.rdma_write_64B_ops_per_s).toBe(2);
  });
});
