// Events: every device event, in a virtualized log over the typed-array ring, filterable by kind, object
// and text. Filtering is incremental (FilteredView), so a million rows stay smooth.
import { fmtNs } from '../format.ts';
import { cmEventText } from '../../../app/protocol/cm-event-text.ts';
import { useState } from 'react';
import { useConsole, useModel, useSampled } from '../store/context.tsx';
import { Field, Section } from '../components/ui.tsx';
import { VirtualRows } from '../components/VirtualRows.tsx';
import { textCols } from '../components/textCols.ts';
import { SampledBanner } from '../components/SampledBanner.tsx';

const fmtT = fmtNs;
const fmtN = (v: number) => (v === 0 ? '' : v > 0xffff ? `0x${v.toString(16)}` : String(v));
/** columns: seq, t, kind, device, object, a, b, c, d (the text takes the rest) */
const WIDTHS = [8, 12, 15, 4, 10, 15, 15, 15, 15];
const HEAD = textCols(['seq', 't (µs)', 'kind', 'dev', 'object', 'a', 'b', 'c', 'd', 'text'], WIDTHS);

export function EventsPanel() {
  useConsole((s) => s.versions.events);
  const model = useModel();
  const filter = useConsole((s) => s.filter);
  const setFilter = useConsole((s) => s.setFilter);
  const [follow, setFollow] = useState(true);
  const [selected, setSelected] = useState<number | null>(null);
  const [objText, setObjText] = useState(filter.obj === null ? '' : String(filter.obj));
  const { ring, view } = model;
  const kinds = ring.kinds.strings;
  const title = useSampled(`Events (${view.length.toLocaleString()} shown of ${ring.size.toLocaleString()} held, ${ring.total.toLocaleString()} received${ring.dropped ? `, ${ring.dropped.toLocaleString()} not sent by the host (sampled or dropped)` : ''}${view.pending ? `; filtering, ${view.pending.toLocaleString()} rows to go` : ''})`);
  const selRow = selected !== null && selected < view.length ? ring.row(view.at(selected)) : null;
  return (
    <div className="stack">
      <SampledBanner what="The log holds the sampled events in order; their seq numbers show where events were left out." />
      <Section title={title} testid="events-section">
        <form className="form" aria-label="filter events" onSubmit={(e) => e.preventDefault()}>
          <Field label="Kind"><select data-testid="filter-kind" value={filter.kind} onChange={(e) => setFilter({ kind: e.target.value })}>
            <option value="">all kinds</option>{kinds.map((k) => <option key={k} value={k}>{k}</option>)}</select></Field>
          <Field label="Object handle"><input data-testid="filter-obj" value={objText} size={6} aria-invalid={objText !== '' && !/^\d+$/.test(objText)}
            onChange={(e) => { const v = e.target.value; setObjText(v); if (v === '' || /^\d+$/.test(v)) setFilter({ obj: v === '' ? null : Number(v) }); }} /></Field>
          <Field label="Text"><input data-testid="filter-text" value={filter.text} onChange={(e) => setFilter({ text: e.target.value })} placeholder="e.g. rkey" /></Field>
          <label className="small"><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> follow</label>
        </form>
        <VirtualRows count={view.length} follow={follow} onUnfollow={() => setFollow(false)} selected={selected} label="event log" testid="event-log" height={480}
          onSelect={(i) => { setFollow(false); setSelected(i); }}
          header={<div className="vrow head ev-line">{HEAD}</div>}
          render={(i) => {
            const pos = view.at(i); const k = pos % ring.capacity;
            const ok = (ring.flags[k] & 1) === 1;
            const kind = ring.kinds.get(ring.kind[k]);
            // the CM's events in words from their numbers (app/protocol/cm-event-text.ts), the device's text after
            const words = cmEventText({ kind, a: ring.a[k]!, b: ring.b[k]!, c: ring.c[k]!, d: ring.d[k]! });
            const text = words ? `${words}${ring.text[k] ? ` | ${ring.text[k]}` : ''}` : ring.text[k] ?? '';
            const line = textCols([String(ring.seq[k]), fmtT(ring.t[k]), kind, ring.device[k] ? String(ring.device[k]) : '',
              `${ring.objKinds.get(ring.objKind[k])} ${ring.obj[k] || ''}`, fmtN(ring.a[k]), fmtN(ring.b[k]), fmtN(ring.c[k]), fmtN(ring.d[k]), text], WIDTHS);
            return <div className={ok ? 'ev-line' : 'ev-line ev-bad'} data-testid="event-row">{line}</div>;
          }} />
      </Section>
      {selRow && (
        <Section title={`Event #${selRow.seq}`}>
          <pre className="mono small" data-testid="event-detail">{JSON.stringify(selRow, null, 2)}</pre>
        </Section>
      )}
    </div>
  );
}
