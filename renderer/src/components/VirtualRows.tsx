// A virtualized list (@tanstack/react-virtual): only the visible rows are in the DOM, so the event log and
// the packet list stay smooth with a million rows. The virtualizer works on blocks of BLOCK rows (fixed row
// height), because it recomputes its measurements for every item whenever the count changes: with a stream
// appending rows every frame, a million items would cost a million steps per frame; 1/32 of that is cheap.
// "Follow" keeps the newest row in view: the tail is drawn in a viewport that does not scroll (no scrollTop write
// per frame, which forced a synchronous layout of the whole list every frame under a stream); scrolling back with
// the wheel (onUnfollow) or unticking follow returns to the scrolled list, positioned at the end.
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';

const BLOCK = 32;

export function VirtualRows({ count, rowHeight = 22, render, follow, onUnfollow, selected, onSelect, height = 420, testid, label, header }: {
  count: number; rowHeight?: number; render: (i: number) => ReactNode; follow: boolean; onUnfollow?: () => void;
  selected?: number | null; onSelect?: (i: number) => void; height?: number | string; testid?: string; label: string; header?: ReactNode;
}) {
  const parent = useRef<HTMLDivElement>(null);
  // viewport height, cached (reading clientHeight after each DOM update would force a synchronous layout)
  const [clientH, setClientH] = useState(typeof height === 'number' ? height : 480);
  useEffect(() => {
    const el = parent.current; if (!el) return;
    setClientH(el.clientHeight);
    const ro = new ResizeObserver(() => setClientH(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const blocks = Math.ceil(count / BLOCK);
  const v = useVirtualizer({
    count: blocks, getScrollElement: () => parent.current, overscan: 1,
    estimateSize: (b) => Math.max(0, Math.min(BLOCK, count - b * BLOCK)) * rowHeight,
  });
  // leaving follow: the scrolled list opens at the end (once, not per frame)
  const wasFollowing = useRef(follow);
  useLayoutEffect(() => {
    const el = parent.current;
    if (!follow && wasFollowing.current && el && count > 0) el.scrollTop = count * rowHeight - clientH;
    wasFollowing.current = follow;
  }, [follow]);   // eslint-disable-line react-hooks/exhaustive-deps
  const reveal = (j: number) => {
    const el = parent.current; if (!el) return;
    const top = j * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + clientH) el.scrollTop = top + rowHeight - clientH;
  };
  const onKey = (e: KeyboardEvent) => {
    if (!onSelect || !count) return;
    const cur = selected ?? -1;
    const page = Math.max(1, Math.floor(clientH / rowHeight) - 1);
    const next = e.key === 'ArrowDown' ? cur + 1 : e.key === 'ArrowUp' ? cur - 1 : e.key === 'PageDown' ? cur + page
      : e.key === 'PageUp' ? cur - page : e.key === 'Home' ? 0 : e.key === 'End' ? count - 1 : null;
    if (next === null) return;
    e.preventDefault();
    const j = Math.max(0, Math.min(count - 1, next));
    onSelect(j); reveal(j);
  };
  const el = parent.current;
  // following: the end of the list, drawn relative to a viewport that does not scroll
  const viewTop = follow ? Math.max(0, count * rowHeight - clientH) : el ? el.scrollTop : 0;
  const viewBottom = viewTop + clientH;
  const items = follow ? [] : v.getVirtualItems();
  const row = (i: number, key: number, top: number) => (
    <div key={key} role="row" aria-rowindex={i + 1} aria-selected={selected === i}
      className={`vrow ${selected === i ? 'selected' : ''} ${i % 2 ? 'odd' : ''}`}
      style={{ position: 'absolute', top, left: 0, right: 0, height: rowHeight }}
      onClick={() => onSelect?.(i)}>
      {/* a row of a grid owns cells (WAI-ARIA grid pattern): the line is one cell */}
      <div role="gridcell" className="vcell">{render(i)}</div>
    </div>
  );
  // following: just the rows in the viewport, keyed by slot so that as the tail moves React updates the same DOM
  // rows in place instead of removing and creating them every frame
  const tail: ReactNode[] = [];
  if (follow) {
    const n = Math.min(count, Math.ceil(clientH / rowHeight) + 1);
    for (let i = count - n; i < count; i++) tail.push(row(i, i % (n + 1), i * rowHeight - viewTop));
  }
  return (
    <div className="vlist">
      {header}
      <div ref={parent} className="vlist-scroll" style={{ height }} tabIndex={0} role="grid" aria-label={label} aria-rowcount={count}
        data-testid={testid} data-follow={follow} onKeyDown={onKey} onWheel={(e) => { if (follow && e.deltaY < 0) onUnfollow?.(); }}>
        <div style={follow ? { height: '100%', position: 'relative', width: '100%', overflow: 'hidden' } : { height: count * rowHeight, position: 'relative', width: '100%' }}>
          {follow ? tail : items.map((it) => {
            const first = it.index * BLOCK;
            const last = Math.min(count, first + BLOCK);
            const rows: ReactNode[] = [];
            for (let i = first; i < last; i++) {
              const top = i * rowHeight;
              if (top + rowHeight < viewTop - 400 || top > viewBottom + 400) continue;   // only rows near the viewport
              rows.push(row(i, i, (i - first) * rowHeight));
            }
            return (
              <div key={it.key} style={{ position: 'absolute', top: 0, left: 0, right: 0, height: it.size, transform: `translateY(${it.start}px)` }}>
                {rows}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
