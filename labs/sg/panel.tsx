// The SG lab's panel: the scatter-list builder (elements typed or generated, each element's verdict under the page
// rule as the device's map_mr_sg applies it, the breaking ones marked with why), and the side-by-side comparison of
// the five strategies (table + uPlot bar chart), every figure from the agent's sg.* commands.
import { useCallback, useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './panel.css';
import { useConsole, useConsoleStore } from '../../renderer/src/store/context.tsx';
import type { PanelDef } from '../../renderer/src/panels/registry.ts';
import type { CommandArgsIn, ResultOf } from '../../app/protocol/index.ts';
import { SG_PATTERNS } from './schema.ts';
import type { SgComparison, SgElem, SgMapping } from './schema.ts';

type SgName = 'sg.generate' | 'sg.check' | 'sg.compare';
/** an sg.* command with its typed reply (the console sends it through the store's run; a test can answer it directly) */
export type SgCall = <N extends SgName>(cmd: N, args: CommandArgsIn<N>) => Promise<{ ok: true; result: ResultOf<N> } | { ok: false; error: { code: string; message: string } }>;

const hex = (n: number) => `0x${n.toString(16)}`;

/** The list with each element's verdict; breaking elements carry class sg-break, the first of them sg-stop. */
export function SgListTable({ list, check, onEdit, onRemove }: {
  list: SgElem[]; check: SgMapping | null;
  onEdit?: (i: number, e: SgElem) => void; onRemove?: (i: number) => void;
}) {
  return (
    <table className="table compact sg-list" data-testid="sg-list">
      <thead><tr><th>#</th><th>offset</th><th>length</th><th>end</th><th>pages</th><th>verdict</th>{onRemove && <th />}</tr></thead>
      <tbody>
        {list.map((e, i) => {
          const v = check?.elements[i];
          const cls = !v ? '' : v.reason === 'not_reached' ? 'sg-unreached' : v.why !== 0 ? `sg-break${check?.firstBreak === i ? ' sg-stop' : ''}` : '';
          return (
            <tr key={i} className={cls} data-testid={`sg-el-${i}`} data-reason={v?.reason ?? ''}>
              <td>{i}</td>
              <td>{onEdit ? <input aria-label={`offset ${i}`} defaultValue={e.offset} onBlur={(ev) => onEdit(i, { ...e, offset: Number(ev.target.value) })} /> : hex(e.offset)}</td>
              <td>{onEdit ? <input aria-label={`length ${i}`} defaultValue={e.length} onBlur={(ev) => onEdit(i, { ...e, length: Number(ev.target.value) })} /> : e.length}</td>
              <td>{hex(e.offset + e.length)}</td>
              <td>{v?.pages ?? ''}</td>
              <td>{v ? (v.why === 0 ? (v.contiguous ? 'mapped (continues the previous)' : 'mapped') : v.text) : ''}</td>
              {onRemove && <td><button type="button" aria-label={`remove ${i}`} onClick={() => onRemove(i)}>×</button></td>}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const us = (ns: number | undefined | null) => (ns === undefined || ns === null ? '—' : (ns / 1000).toFixed(1));
const n1 = (v: number | undefined | null) => (v === undefined || v === null ? '—' : Number.isInteger(v) ? String(v) : v.toFixed(1));

/** The side-by-side table: per-pair costs at queue depth 1, throughput at 32; refusals with the device's words. */
export function SgComparisonTable({ c }: { c: SgComparison }) {
  return (
    <table className="table compact" data-testid="sg-comparison">
      <thead><tr>
        <th>strategy</th><th>outcome</th><th>bytes copied</th><th>registrations</th><th>invalidations</th><th>keys on wire</th>
        <th>remote ops</th><th>WRs</th><th>packets</th><th>device µs</th><th>wall µs</th><th>initiator µs</th><th>MRs held</th>
        <th>QD1 µs/IO (device)</th><th>QD32 MB/s (wall)</th><th>in flight at QD32</th>
      </tr></thead>
      <tbody>
        {c.rows.map((r) => (
          <tr key={r.strategy} data-testid={`sg-row-${r.strategy}`} data-outcome={r.outcome}>
            <td>{r.strategy}</td>
            <td title={r.msg}>{r.outcome === 'ok' ? (r.verified ? 'ok, verified' : 'NOT verified') : `${r.outcome}: ${r.msg}`}</td>
            <td>{n1(r.perPair?.bytesCopied)}</td><td>{n1(r.perPair?.registrations)}</td><td>{n1(r.perPair?.invalidations)}</td>
            <td>{n1(r.perPair?.keysOnWire)}</td><td>{n1(r.perPair?.remoteOps)}</td><td>{n1(r.perPair?.wrsPosted)}</td>
            <td>{n1(r.perPair?.packets)}</td><td>{us(r.perPair?.deviceNs)}</td><td>{us(r.perPair?.wallNs)}</td>
            <td>{us(r.perPair?.wallInitiatorNs)}</td><td>{r.mrsHeld}</td><td>{us(r.latencyQd1?.deviceNsPerIo)}</td>
            <td>{r.throughputQd32 ? (r.throughputQd32.wallBytesPerSecond / 1e6).toFixed(0) : '—'}</td>
            <td>{r.throughputQd32?.maxInFlight ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const METRICS = {
  bytesCopied: 'bytes copied per pair', keysOnWire: 'keys on the wire per pair', remoteOps: 'remote operations per pair',
  wrsPosted: 'WRs posted per pair', wallInitiatorNs: 'initiator ns per pair', wallNs: 'wall ns per pair',
} as const;
type Metric = keyof typeof METRICS;

/** One metric per strategy as bars (uPlot); refused strategies have no bar. */
function SgChart({ c, metric }: { c: SgComparison; metric: Metric }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const host = el.current; if (!host) return;
    const xs = c.rows.map((_, i) => i);
    const ys = c.rows.map((r) => (r.perPair ? r.perPair[metric] : null));
    const bars = uPlot.paths.bars!({ size: [0.6, 80] });
    const plot = new uPlot({
      width: Math.max(320, host.clientWidth), height: 200, legend: { show: false },
      scales: { x: { time: false, range: [-0.5, c.rows.length - 0.5] } },
      axes: [{ values: (_u, ticks) => ticks.map((t) => c.rows[t]?.strategy ?? '') }, { size: 80, values: (_u, ticks) => ticks.map((t) => t.toLocaleString('en')) }],
      series: [{}, { label: METRICS[metric], paths: bars, fill: 'rgba(31,119,180,0.6)', stroke: '#1f77b4', points: { show: false } }],
    }, [xs, ys], host);
    return () => plot.destroy();
  }, [c, metric]);
  return <div ref={el} className="sg-chart" data-testid="sg-chart" aria-label={METRICS[metric]} />;
}

export function SgPanel({ call }: { call: SgCall }) {
  const [gen, setGen] = useState<{ pattern: (typeof SG_PATTERNS)[number]; n: number; total: number; seed: number }>({ pattern: 'random', n: 16, total: 65536, seed: 1 });
  const [list, setList] = useState<SgElem[]>([]);
  const [pageSize, setPageSize] = useState(4096);
  const [check, setCheck] = useState<SgMapping | null>(null);
  const [cmp, setCmp] = useState<SgComparison | null>(null);
  const [metric, setMetric] = useState<Metric>('bytesCopied');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const ask = async <N extends SgName>(cmd: N, args: CommandArgsIn<N>): Promise<ResultOf<N> | null> => {
    const r = await call(cmd, args);
    if (!r.ok) { setError(`${r.error.code}: ${r.error.message}`); return null; }
    setError('');
    return r.result;
  };
  const recheck = async (l: SgElem[], ps = pageSize) => {
    setList(l); setCmp(null);
    setCheck(l.length ? await ask('sg.check', { list: l, pageSize: ps }) : null);
  };
  const generate = async () => {
    const r = await ask('sg.generate', gen);
    if (r) await recheck(r.list);
  };
  const runAll = async () => {
    setBusy(true);
    try { setCmp(await ask('sg.compare', { list })); } finally { setBusy(false); }
  };

  return (
    <div className="stack" data-testid="sg-panel">
      <form className="form" aria-label="generate a scatter list" onSubmit={(e) => { e.preventDefault(); void generate(); }}>
        <label className="field"><span className="field-label">pattern</span>
          <select value={gen.pattern} onChange={(e) => setGen({ ...gen, pattern: SG_PATTERNS.find((p) => p === e.target.value) ?? gen.pattern })}>
            {SG_PATTERNS.map((p) => <option key={p} value={p}>{p}</option>)}
          </select></label>
        <label className="field"><span className="field-label">elements</span>
          <input type="number" min={1} value={gen.n} onChange={(e) => setGen({ ...gen, n: Number(e.target.value) })} /></label>
        <label className="field"><span className="field-label">bytes</span>
          <input type="number" min={1} value={gen.total} onChange={(e) => setGen({ ...gen, total: Number(e.target.value) })} /></label>
        <label className="field"><span className="field-label">seed</span>
          <input type="number" min={0} value={gen.seed} onChange={(e) => setGen({ ...gen, seed: Number(e.target.value) })} /></label>
        <button type="submit" data-testid="sg-generate">Generate</button>
        <label className="field"><span className="field-label">page size (per MR)</span>
          <select value={pageSize} onChange={(e) => { const ps = Number(e.target.value); setPageSize(ps); void recheck(list, ps); }}>
            {[512, 4096, 65536, 2 << 20].map((p) => <option key={p} value={p}>{p}</option>)}
          </select></label>
        <button type="button" onClick={() => void recheck([...list, { offset: (list.at(-1)?.offset ?? 0) + (list.at(-1)?.length ?? 0) + 4096, length: 4096 }])}>Add element</button>
      </form>
      {error && <div className="error" role="alert">{error}</div>}
      {check && (
        <p data-testid="sg-verdict">
          {check.firstBreak === null
            ? `ib_map_mr_sg maps all ${check.mapped} elements into ${check.entries} pages: one fast registration takes the list.`
            : `ib_map_mr_sg maps ${check.mapped} of ${list.length} elements: element ${check.firstBreak} ${check.elements[check.firstBreak]?.text}. Fast registration refuses the list.`}
        </p>
      )}
      <SgListTable list={list} check={check}
        onEdit={(i, e) => void recheck(list.map((x, k) => (k === i ? e : x)))}
        onRemove={(i) => void recheck(list.filter((_, k) => k !== i))} />
      <p className="muted sg-why">Rule: drivers/infiniband/core/verbs.c ib_sg_to_pages — the first element may start inside a page, the last may end inside one; every other boundary must be page aligned unless the elements are contiguous.</p>
      <div className="form">
        <button type="button" data-testid="sg-compare" disabled={!list.length || busy} onClick={() => void runAll()}>{busy ? 'Running…' : 'Run the five strategies'}</button>
        {cmp && (
          <label className="field"><span className="field-label">chart</span>
            <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
              {Object.entries(METRICS).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
            </select></label>
        )}
      </div>
      {cmp && <SgComparisonTable c={cmp} />}
      {cmp && <SgChart c={cmp} metric={metric} />}
    </div>
  );
}

/** The panel in the console: the host's sg.* commands, sent through the store like every other command. */
function SgConsolePanel() {
  const run = useConsole((s) => s.run);
  const store = useConsoleStore();
  const call: SgCall = useCallback(async (cmd, args) => {
    const form = `lab.sg:${cmd}`;
    const r = await run(form, cmd, args);
    if (r) return { ok: true, result: r };
    const e = store.getState().errors[form];
    store.getState().clearError(form);            // the panel shows it next to what failed
    return { ok: false, error: { code: e?.code ?? 'ERROR', message: e?.message ?? 'the host refused the command' } };
  }, [run, store]);
  return <SgPanel call={call} />;
}

const panel: PanelDef = {
  id: 'sg', title: 'Lab: scatter lists', order: 85, icon: '⋯',
  summary: 'Lab 1: build a scatter list, see where it breaks the page rule, compare five ways to put it under one key',
  component: SgConsolePanel,
};
export default panel;
