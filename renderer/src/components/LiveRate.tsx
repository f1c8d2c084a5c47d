// Live rate chart (uPlot): events/s and packets/s, sampled from the event ring and wire log 4 times a second.
// The uPlot instance is owned here and fed with setData; React never re-renders per sample.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useConsoleStore } from '../store/context.tsx';

const WINDOW = 240; // samples (60 s)

export function LiveRate() {
  const el = useRef<HTMLDivElement>(null);
  const store = useConsoleStore();
  useEffect(() => {
    const host = el.current; if (!host) return;
    const cs = getComputedStyle(document.documentElement);
    const c1 = cs.getPropertyValue('--op-write').trim() || '#1f77b4';
    const c2 = cs.getPropertyValue('--op-atomic').trim() || '#ff7f0e';
    const axis = { stroke: cs.getPropertyValue('--muted').trim(), grid: { stroke: cs.getPropertyValue('--border').trim() } };
    const xs: number[] = []; const ev: number[] = []; const pk: number[] = [];
    const plot = new uPlot({
      width: Math.max(300, host.clientWidth), height: 180, legend: { show: true },
      scales: { x: { time: true } },
      series: [{}, { label: 'events/s', stroke: c1, width: 1.5 }, { label: 'packets/s', stroke: c2, width: 1.5 }],
      axes: [axis, axis],
    }, [xs, ev, pk], host);
    const { model } = store.getState();
    let lastEv = model.ring.total; let lastPk = model.wire.base + model.wire.rows.length; let lastT = performance.now();
    const timer = setInterval(() => {
      const now = performance.now(); const dt = (now - lastT) / 1000; lastT = now;
      const e = model.ring.total; const p = model.wire.base + model.wire.rows.length;
      xs.push(Date.now() / 1000); ev.push((e - lastEv) / dt); pk.push((p - lastPk) / dt); lastEv = e; lastPk = p;
      if (xs.length > WINDOW) { xs.shift(); ev.shift(); pk.shift(); }
      plot.setData([xs, ev, pk]);
    }, 250);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(300, host.clientWidth), height: 180 }));
    ro.observe(host);
    return () => { clearInterval(timer); ro.disconnect(); plot.destroy(); };
  }, [store]);
  return <div ref={el} className="live-rate" data-testid="live-rate" aria-label="events and packets per second" />;
}
