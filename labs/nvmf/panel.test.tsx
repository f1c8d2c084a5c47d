// The flow view draws what the agents did: a real run's state (nvmf.state's shape), each command's rows by owner,
// the step slider cutting a command mid-way, the queues' CM private data and the offload parts marked not built.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { state } from './agent.ts';
import { bringUp } from './bench.ts';
import { NvmfFlowView, groupFlow } from './panel.tsx';
import { enableOffload, watchDevice } from './offload.ts';
import type { ResultOf } from '../../app/protocol/index.ts';

describe('lab nvmf flow view', () => {
  const { x, f } = bringUp(3);
  f.run(1, { op: 'read', nsid: 1, slba: 0n, nlb: 8, sgl: 'keyed-inv' });
  const s = state(f, 4096);
  x.close();

  it('groups the rows per command, a READ going host -> software -> host with the RDMA WRITE before the SEND', () => {
    const cmds = groupFlow(s.flow);
    const read = cmds.at(-1)!;
    expect(read.name).toBe('read');
    const stages = read.rows.map((r) => `${r.owner}:${r.stage}`);
    expect(stages[0]).toBe('host:SUBMIT');
    expect(stages).toContain('software:TRANSFERRING_CONTROLLER_TO_HOST');
    expect(stages.indexOf('software:TRANSFERRING_CONTROLLER_TO_HOST')).toBeLessThan(stages.indexOf('software:COMPLETING'));
    expect(stages.indexOf('host:VERIFIED')).toBeGreaterThan(stages.indexOf('host:RESPONSE'));   // the target's SEND completion (its ACK) may come after
    expect(read.rows.find((r) => r.stage === 'COMPLETING')!.verb).toBe('IBV_WR_SEND_WITH_INV');
    expect(cmds.filter((c) => c.name === 'write').length).toBe(128);
  });

  it('draws the chosen command up to the slider, the queues and the offload note', () => {
    const cmds = groupFlow(s.flow), read = cmds.at(-1)!;
    const half = Math.floor(read.rows.length / 2);
    const html = renderToStaticMarkup(<NvmfFlowView state={s} selected={read.key} upTo={half} />);
    expect(html).toContain(`${half} of ${read.rows.length} steps`);
    expect((html.match(/data-done="true"/g) ?? []).length).toBe(half);
    expect(html).toContain('CNTLID 1');
    expect(html).toContain('CSTS.RDY 1');
    expect(html).toContain('backend: in-memory (temporary)');
    expect(html).toMatch(/No device offload in this session/);
    expect(html).toContain('<td>ESTABLISHED</td>');
  });

  it('with the offload: an offloaded READ\'s device rows cut mid-command, the staging grid, the backend rings, the namespace map', () => {
    const { x: y, f: g } = bringUp(4, true);
    watchDevice(g);
    // 32 READs in flight: some are in the device (staging in use) when the snapshot is taken
    for (let i = 0; i < 32; i++) g.host.submit(g.pairs.get(1)!.host, { op: 'read', nsid: 1, slba: BigInt(i * 8), nlb: 8, sgl: 'keyed' });
    for (let i = 0; i < 40; i++) { y.s.step(); g.afterStep!(); g.target.poll(); g.host.poll(); }
    const ex = <T,>(cmd: string, args: Record<string, unknown>) => { const r = y.exec({ cmd, args } as never); if (!r.ok) throw new Error(r.error.message); return r.result as T; };
    const snap = ex<ResultOf<'nvmf.snapshot'>>('nvmf.snapshot', { srq: g.offload!.srq });
    const ssd = ex<ResultOf<'nvme.snapshot'>>('nvme.snapshot', { nvme: g.offload!.nvme });
    g.pump();
    const st = state(g, 4096);
    y.close();
    expect(snap.inflight.length).toBeGreaterThan(0);
    const used = snap.staging.pages.filter((p) => p !== 0).length;
    expect(used).toBeGreaterThan(0);
    const read = groupFlow(st.flow).at(-1)!;
    const dev = read.rows.filter((r) => r.owner === 'device');
    expect(dev.map((r) => r.stage)).toContain('SQ_DOORBELL');
    const cut = read.rows.findIndex((r) => r.stage === 'CQE');
    const html = renderToStaticMarkup(<NvmfFlowView state={st} offload={{ snap, ssd }} selected={read.key} upTo={cut} />);
    expect(html).toContain('device (modelled)');
    expect(html).toContain(`${cut} of ${read.rows.length} steps`);
    expect(html).toContain(`<strong>${used} in use</strong>`);
    expect(html).toContain('Namespace map');
    expect(html).toContain('Soft SSD rings');
    expect(html).toContain(`Offload enabled on queue(s) 1`);
    expect(html).not.toMatch(/No device offload/);
  });
});
