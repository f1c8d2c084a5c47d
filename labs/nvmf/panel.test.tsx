// The flow view draws what the agents did: a real run's state (nvmf.state's shape), each command's rows by owner,
// the step slider cutting a command mid-way, the queues' CM private data and the offload parts marked not built.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { state } from './agent.ts';
import { bringUp } from './bench.ts';
import { NvmfFlowView, groupFlow } from './panel.tsx';

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
    expect(html).toMatch(/not built in this build/);
    expect(html).toContain('<td>ESTABLISHED</td>');
  });
});
