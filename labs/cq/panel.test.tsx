// The lab panel draws a failing run at any step: the CQ state and both contexts of that step, and the out-of-order
// delivery once the replay has reached it.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { runSeed } from './explorer.ts';
import { CqRunPanel } from './panel.tsx';

describe('lab cq panel', () => {
  const run = runSeed('report-missed', 1, { trace: true });
  const v = run.violations[0]!;

  it('shows the CQ and every consumer at the chosen step', () => {
    const t = run.trace![v.step - 1]!;
    const html = renderToStaticMarkup(<CqRunPanel run={run} at={v.step} />);
    expect(html).toContain(`entries ${t.cq.entries}`);
    expect(html).toContain(t.cq.armed ? '>armed<' : '>not armed<');
    expect(html).toContain(`irq: ${t.handler}`);
    t.workers.forEach((w, i) => expect(html).toContain(`w${i}: ${w}`));
    expect(html).toContain(`wr_id ${v.wrId} delivered by ${v.by} while wr_id ${v.expected} was still due`);
  }, 60_000);

  it('does not show the violation before the replay reaches it', () => {
    const html = renderToStaticMarkup(<CqRunPanel run={run} at={v.step - 1} />);
    expect(html).not.toContain('was still due');
    expect(html).toContain('no completion out of order so far');
    expect(renderToStaticMarkup(<CqRunPanel run={run} at={0} />)).toContain('before the first step');
  }, 60_000);
});
