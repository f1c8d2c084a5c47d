// --runs N: vl_bench N times, each run with its own same-run baselines. Every top-level number is the median of the
// runs (the lower middle one for an even N), and `spread` gives each one's min, max and values in run order; the
// nested detail (raw, sg) is the median run's by rdma_write_1MiB_vs_memcpy. One run: that run, unchanged.
export function medianOfRuns(samples) {
  if (samples.length === 1) return samples[0];
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const key = 'rdma_write_1MiB_vs_memcpy';
  const order = samples.map((s, i) => [s[key] ?? 0, i]).sort((a, b) => a[0] - b[0]);
  const out = { ...samples[order[Math.floor((order.length - 1) / 2)][1]] };
  const spread = {};
  for (const [k, v] of Object.entries(samples[0])) {
    if (typeof v !== 'number') continue;
    const values = samples.map((s) => s[k]).filter((x) => typeof x === 'number');
    out[k] = med(values);
    spread[k] = { min: Math.min(...values), max: Math.max(...values), values };
  }
  out.runs = samples.length;
  out.spread = spread;
  return out;
}
