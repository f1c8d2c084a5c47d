// Lab 4's tab: the flow view. Per command (queue, CID) the timeline of who did what — host driver, target software,
// device — from the agents' flow rows (labs/nvmf/flow.ts: each row an action an agent took or a work completion it
// polled); a step slider replays one command's rows so the view can stop mid-command. Beside it the controller's
// registers, the queues with their CM private data, and the counters. Drawn only from nvmf.state / nvmf.io replies.
// With the device's offload set up (nvmf.offload) the device's steps are rows of their own (owner "device",
// modelled) and offload-panel.tsx draws the staging grid, the backend rings, the namespace map and the counters from
// nvmf.snapshot / nvme.snapshot; without it the view says that every command is served by software.
import { useMemo, useState } from 'react';
import type { ResultOf } from '../../app/protocol/index.ts';
import { ErrorMessage } from '../../renderer/src/components/ui.tsx';
import type { PanelDef } from '../../renderer/src/panels/registry.ts';
import { useConsole } from '../../renderer/src/store/context.tsx';
import type { FlowRow } from './flow.ts';
import { OffloadView } from './offload-panel.tsx';
import { CSTS } from './spec.ts';
import './panel.css';

type State = ResultOf<'nvmf.state'>;
export interface OffloadSnap { snap: ResultOf<'nvmf.snapshot'>; ssd: ResultOf<'nvme.snapshot'> | null }

export interface CommandRows { key: string; qid: number; cid: number; name: string; rows: FlowRow[] }

/** The flow rows grouped per command (queue, CID), in the order each command first appears; a CID reused later on
 *  the same queue starts a new command at its host SUBMIT. */
export function groupFlow(rows: FlowRow[]): CommandRows[] {
  const out: CommandRows[] = [], open = new Map<string, CommandRows>();
  for (const r of rows) {
    const k = `${r.qid}:${r.cid}`;
    let c = open.get(k);
    if (!c || (r.owner === 'host' && r.stage === 'SUBMIT')) {
      c = { key: `${k}#${out.length}`, qid: r.qid, cid: r.cid, name: r.owner === 'host' && r.stage === 'SUBMIT' ? (r.detail ?? '').split(',')[0]! : '?', rows: [] };
      out.push(c); open.set(k, c);
    }
    c.rows.push(r);
  }
  return out;
}

const OWNER_LABEL: Record<FlowRow['owner'], string> = { host: 'host driver', software: 'target software', device: 'device (modelled)' };

export function CommandTimeline({ cmd, upTo }: { cmd: CommandRows; upTo: number }) {
  const t0 = cmd.rows[0]?.t ?? 0;
  return (
    <table className="table mono small nvmf-timeline" data-testid="nvmf-timeline">
      <caption>queue {cmd.qid} · CID {cmd.cid} · {cmd.name} — {upTo} of {cmd.rows.length} steps</caption>
      <thead><tr><th className="num">#</th><th className="num">t (ns)</th><th>owner</th><th>stage</th><th>verb</th><th>detail</th></tr></thead>
      <tbody>
        {cmd.rows.map((r, i) => (
          <tr key={i} className={`nvmf-${r.owner}${i >= upTo ? ' nvmf-later' : ''}${r.stage === 'ERROR' || r.stage === 'MISMATCH' ? ' error' : ''}`} data-owner={r.owner} data-done={i < upTo}>
            <td className="num">{i + 1}</td><td className="num">{r.t - t0}</td><td>{OWNER_LABEL[r.owner]}</td><td>{r.stage}</td><td>{r.verb ?? ''}</td><td>{r.detail ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Every command of the state's flow rows, one line each: its stages as chips coloured by owner (interleaved in time
 *  with the other commands' lines). */
export function FlowLines({ cmds, selected, onSelect }: { cmds: CommandRows[]; selected?: string; onSelect?: (k: string) => void }) {
  return (
    <ul className="nvmf-lines" data-testid="nvmf-lines">
      {cmds.map((c) => (
        <li key={c.key} className={c.key === selected ? 'selected' : undefined}>
          <button type="button" className="mono small" onClick={() => onSelect?.(c.key)} aria-label={`show queue ${c.qid} command ${c.cid}`}>q{c.qid} cid {c.cid} {c.name}</button>
          {c.rows.map((r, i) => <span key={i} className={`chip nvmf-${r.owner}`} title={`${OWNER_LABEL[r.owner]} ${r.verb ?? ''} ${r.detail ?? ''}`}>{r.stage}</span>)}
        </li>
      ))}
    </ul>
  );
}

export function NvmfFlowView({ state, offload, selected, upTo, onSelect, onUpTo }: { state: State; offload?: OffloadSnap | null; selected?: string; upTo?: number; onSelect?: (k: string) => void; onUpTo?: (n: number) => void }) {
  const cmds = useMemo(() => groupFlow(state.flow), [state.flow]);
  const cur = cmds.find((c) => c.key === selected) ?? cmds.at(-1);
  const n = Math.min(upTo ?? cur?.rows.length ?? 0, cur?.rows.length ?? 0);
  const c = state.controller;
  return (
    <div className="stack" data-testid="nvmf-flow-view">
      <div className="card"><div className="card-head"><strong>Controller</strong>
        <span className="muted">{state.subnqn}</span></div>
        <div className="card-body chips" data-testid="nvmf-controller">
          {c ? <>
            <span className="badge">CNTLID {c.cntlid}</span><span className="badge mono">CC 0x{c.cc.toString(16)}</span>
            <span className={c.csts & CSTS.RDY ? 'badge on' : 'badge'}>CSTS.RDY {c.csts & CSTS.RDY}</span>
            <span className="badge">KATO {c.kato} ms</span><span className="badge">I/O queues {c.ioQueues.join(', ') || 'none'}</span>
          </> : <span className="muted">no controller yet (the admin Connect creates it)</span>}
          <span className="badge mono">CAP {state.cap}</span>
          <span className="badge">NSID {state.namespace.nsid}: {state.namespace.blocks} x {state.namespace.lbaSize} B</span>
          <span className="badge" title="labs/nvmf/namespace.ts: bytes held by the lab's software until the device's soft NVMe controller is merged">backend: in-memory (temporary)</span>
        </div>
      </div>
      <table className="table mono small" data-testid="nvmf-queues">
        <caption>Queues (RC QP pairs; CM private data HRQSIZE / HSQSIZE → CRQSIZE)</caption>
        <thead><tr><th className="num">QID</th><th>connected</th><th className="num">host QPN</th><th className="num">target QPN</th><th>CM</th><th className="num">HRQSIZE</th><th className="num">HSQSIZE</th><th className="num">CRQSIZE</th><th className="num">SQHD</th><th className="num">in flight</th></tr></thead>
        <tbody>{state.queues.map((q) => (
          <tr key={q.qid}><td className="num">{q.qid}</td><td>{q.connected ? 'yes' : 'no'}</td><td className="num">0x{q.hostQpn.toString(16)}</td><td className="num">0x{q.targetQpn.toString(16)}</td>
            <td>{q.cm.state}</td><td className="num">{q.cm.hrqsize}</td><td className="num">{q.cm.hsqsize}</td><td className="num">{q.cm.crqsize}</td><td className="num">{q.sqhd}</td><td className="num">{q.inFlight}</td></tr>
        ))}</tbody>
      </table>
      <div className="chips small" data-testid="nvmf-counters">
        {(['target', 'host', 'namespace'] as const).map((k) => Object.entries(state.counters[k]).map(([n, v]) => <span key={`${k}.${n}`} className="badge mono">{k}.{n} {v}</span>))}
      </div>
      {offload
        ? <OffloadView snap={offload.snap} ssd={offload.ssd} />
        : <p className="muted small" data-testid="nvmf-offload-note">No device offload in this session (the lab&apos;s section &quot;offload&quot; sets it up with nvmf.offload): every command here is served by the target&apos;s software.</p>}
      {state.offload ? <p className="muted small">Offload enabled on queue(s) {state.offload.enabledQids.join(', ') || 'none yet'}; device rows are the engine&apos;s typed events, modelled.</p> : null}
      <FlowLines cmds={cmds.slice(-16)} selected={cur?.key} onSelect={onSelect} />
      {cur ? <>
        <label className="field"><span className="field-label">step of queue {cur.qid} CID {cur.cid}</span>
          <input type="range" min={0} max={cur.rows.length} value={n} onChange={(e) => onUpTo?.(Number(e.target.value))} data-testid="nvmf-step" aria-label="step within the command" /></label>
        <CommandTimeline cmd={cur} upTo={n} />
      </> : <span className="muted">no command yet</span>}
    </div>
  );
}

/** The lab's tab: the state of the session's NVMe-oF agents (nvmf.state), and one more READ or WRITE on queue 1. */
export function NvmfLabPanel() {
  const run = useConsole((s) => s.run);   // typed by the command's result schema (ResultOf<N>)
  const [state, setState] = useState<State | null>(null);
  const [offload, setOffload] = useState<OffloadSnap | null>(null);
  const [selected, setSelected] = useState<string | undefined>();
  const [upTo, setUpTo] = useState<number | undefined>();
  const refresh = async () => {
    const s = await run('nvmf.state', 'nvmf.state', { rows: 512 });
    if (!s) return;
    const snap = s.offload ? await run('nvmf.snapshot', 'nvmf.snapshot', { srq: s.offload.srq }) : null;
    const ssd = s.offload ? await run('nvme.snapshot', 'nvme.snapshot', { nvme: s.offload.nvme }) : null;
    setState(s); setOffload(snap ? { snap, ssd } : null); setSelected(undefined); setUpTo(undefined);
  };
  const io = async (op: 'read' | 'write') => { await run('nvmf.io', 'nvmf.io', { qid: 1, op, slba: 0, nlb: 8 }); await refresh(); };
  return (
    <div className="panel-body stack" data-testid="lab-nvmf-tab">
      <div className="card"><div className="card-body form">
        <button type="button" onClick={() => void refresh()} data-testid="nvmf-refresh">Show the agents&apos; state</button>
        <button type="button" onClick={() => void io('write')} data-testid="nvmf-write">WRITE 4 KiB on queue 1</button>
        <button type="button" onClick={() => void io('read')} data-testid="nvmf-read">READ 4 KiB on queue 1</button>
        <ErrorMessage form="nvmf.state" /><ErrorMessage form="nvmf.io" /><ErrorMessage form="nvmf.snapshot" /><ErrorMessage form="nvme.snapshot" />
      </div></div>
      {state
        ? <NvmfFlowView state={state} offload={offload} selected={selected} upTo={upTo} onSelect={(k) => { setSelected(k); setUpTo(undefined); }} onUpTo={setUpTo} />
        : <p className="muted small">Start lab 4 in the Labs panel (its steps run nvmf.setup, the queues, Connect and I/O in this console&apos;s session), then show the agents&apos; state here.</p>}
    </div>
  );
}

const panel: PanelDef = {
  id: 'lab-nvmf', title: 'Lab 4: NVMe-oF', order: 87, component: NvmfLabPanel,
  summary: 'lab 4: the NVMe-oF flow view — per command, who did what (host driver, target software, device offload), the queues with their CM private data, the controller, the staging buffer, the backend rings, the namespace map and the counters',
};
export default panel;
