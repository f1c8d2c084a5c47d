// The SG panel's tables render what the agent returned: breaking elements marked with the device's reason,
// refusals with the device's words.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../app/host/native.ts';
import { handleSg } from './agent.ts';
import { SgComparisonTable, SgListTable } from './panel.tsx';
import type { SgComparison, SgElem, SgMapping } from './schema.ts';

const addon = loadAddon();
const ok = <T,>(r: ReturnType<typeof handleSg>): T => { if (!r.ok) throw new Error(r.error.message); return r.result as T; };

describe('SG panel', () => {
  const list = ok<{ list: SgElem[] }>(handleSg(addon, 'sg.generate', { pattern: 'one_byte_off', n: 8, total: 32768 })).list;
  it('marks the element where mapping stops, and why', () => {
    const check = ok<SgMapping>(handleSg(addon, 'sg.check', { list }));
    const html = renderToStaticMarkup(<SgListTable list={list} check={check} />);
    expect(html).toContain('class="sg-break sg-stop" data-testid="sg-el-4" data-reason="start"');
    expect(html).toContain('starts inside a 4096-byte page');
    expect(html).toContain('data-testid="sg-el-5" data-reason="not_reached"');
    expect(html.match(/data-reason="ok"/g)).toHaveLength(4);
  });
  it('shows each strategy with its figures or its refusal', () => {
    const c = ok<SgComparison>(handleSg(addon, 'sg.compare', { list }));
    const html = renderToStaticMarkup(<SgComparisonTable c={c} />);
    expect(html).toContain('data-testid="sg-row-fast_reg" data-outcome="refused"');
    expect(html).toContain('data-testid="sg-row-indirect" data-outcome="ok"');
    expect(html).toContain('ok, verified');
    expect(html).toContain('ib_map_mr_sg mapped 4 of 8');
  });
});
