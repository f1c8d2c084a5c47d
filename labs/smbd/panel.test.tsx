// The lab's views draw the agent's replies: the credit board of the deadlock (both sides at 0 send credits,
// stalled), the negotiation inspector's bytes and failed rule, the fragments and an SMB2 READ's path.
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { NativeExecutor } from '../../app/host/executor.ts';
import type { Command } from '../../app/protocol/index.ts';
import { SmbdAgent } from './host.ts';
import { CreditBoard, FragmentView, IoView, NegotiationView } from './panel.tsx';

const exs: NativeExecutor[] = [];
afterEach(() => { for (const e of exs.splice(0)) e.close(); });
function agent(): SmbdAgent {
  const ex = new NativeExecutor({ seed: 1 });
  exs.push(ex);
  return new SmbdAgent({ execute: (c: Command) => ex.exec(c) });
}
const ok = <T,>(r: { ok: true; result: T } | { ok: false; error: { message: string } }): T => { if (!r.ok) throw new Error(r.error.message); return r.result; };

describe('lab smbd views', () => {
  it('the deadlock on the credit board', () => {
    const a = agent();
    ok(a.start({ client: 'last-credit-bug', server: 'last-credit-bug', credits: 'lab' }));
    const b = ok(a.burst({ seed: 1, perSide: 24 }));
    const html = renderToStaticMarkup(<CreditBoard board={b} />);
    expect(html).toContain('data-testid="smbd-stalled"');
    expect(html).toMatch(/data-testid="smbd-client-SendCredits">0</);
    expect(html).toMatch(/data-testid="smbd-server-SendCredits">0</);
    expect(html).toContain('no send credits');
  });
  it('the negotiation inspector: bytes as received, the rule ksmbd fails', () => {
    const a = agent();
    const s = ok(a.start({ server: 'ksmbd', request: { maxFragmentedSize: 131072 } }));
    const html = renderToStaticMarkup(<NegotiationView n={s.negotiation} />);
    expect(html).toContain('00 01 00 01 00 00 ff 00');
    expect(html).toMatch(/data-rule="req.max-fragmented-size"><td>MaxFragmentedSize &gt; 131072<\/td><td class="num">131072<\/td><td>FAIL/);
    expect(html).toContain('no response');
  });
  it('fragments and an SMB2 READ by SEND_WITH_INV', () => {
    const a = agent();
    ok(a.start({}));
    const b = ok(a.send({ from: 'client', bytes: 1341 }));
    const notes = b.notes.client.map((note) => ({ side: 'client' as const, note }));
    const html = renderToStaticMarkup(<FragmentView notes={notes} delivered={b.delivered} />);
    expect(html).toContain('server: 1341 bytes in 2 fragment(s), RFC1002 length 1341');
    const r = a.ioOp({ op: 'READ' });
    if (!r.ok) throw new Error(r.error.message);
    const io = renderToStaticMarkup(<IoView r={r.result} />);
    expect(io).toContain('IBV_WR_SEND_WITH_INV');
    expect(io).toContain('by the response (IBV_WC_WITH_INV)');
    expect(io).toContain('1 registration(s)');
  });
});
