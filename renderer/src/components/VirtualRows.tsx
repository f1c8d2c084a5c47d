// A virtualized list (@tanstack/react-virtual): only the visible rows are in the DOM, so the event log and
// the packet list stay smooth with a million rows. Optional "follow" keeps the newest row in view.
import { useEffect, useRef, type ReactNode, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';

export function VirtualRows({ count, rowHeight = 22, render, follow, selected, onSelect, height = 420, testid, label, header }: {
  count: number; rowHeight?: number; render: (i: number) => ReactNode; follow: boolean;
  selected?: number | null; onSelect?: (i: number) => void; height?: number | string; testid?: string; label: string; header?: ReactNode;
}) {
  const parent = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count, getScrollElement: () => parent.current, estimateSize: () => rowHeight, overscan: 12 });
  useEffect(() => { if (follow && count > 0) v.scrollToIndex(count - 1, { align: 'end' }); }, [follow, count, v]);
  const onKey = (e: KeyboardEvent) => {
    if (!onSelect || !count) return;
    const cur = selected ?? -1;
    const page = Math.max(1, Math.floor((parent.current?.clientHeight ?? 400) / rowHeight) - 1);
    const next = e.key === 'ArrowDown' ? cur + 1 : e.key === 'ArrowUp' ? cur - 1 : e.key === 'PageDown' ? cur + page
      : e.key === 'PageUp' ? cur - page : e.key === 'Home' ? 0 : e.key === 'End' ? count - 1 : null;
    if (next === null) return;
    e.preventDefault();
    const j = Math.max(0, Math.min(count - 1, next));
    onSelect(j); v.scrollToIndex(j, { align: 'auto' });
  };
  return (
    <div className="vlist">
      {header}
      <div ref={parent} className="vlist-scroll" style={{ height }} tabIndex={0} role="grid" aria-label={label} aria-rowcount={count}
        data-testid={testid} onKeyDown={onKey}>
        <div style={{ height: v.getTotalSize(), position: 'relative', width: '100%' }}>
          {v.getVirtualItems().map((it) => (
            <div key={it.key} role="row" aria-rowindex={it.index + 1} aria-selected={selected === it.index}
              className={`vrow ${selected === it.index ? 'selected' : ''} ${it.index % 2 ? 'odd' : ''}`}
              style={{ position: 'absolute', top: 0, left: 0, right: 0, height: rowHeight, transform: `translateY(${it.start}px)` }}
              onClick={() => onSelect?.(it.index)}>
              {render(it.index)}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
