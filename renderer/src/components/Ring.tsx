// A work/completion queue drawn as a ring: one wedge per slot, colored by opcode, outlined red on error,
// faded once consumed; producer (P) and consumer (C) indices marked. Slot contents come from Wqe*/Cqe events.
import type { WcOpcode, WrOpcode } from '../../../app/protocol/index.ts';
import type { Ring, Slot } from '../store/models.ts';

type OpClass = 'atomic' | 'read' | 'write' | 'recv' | 'send' | 'other';
/** The wedge color of every opcode a slot can hold: each WR opcode (SQ), each WC opcode (CQ), RECV (RQ / SRQ). A
 *  table typed by the enum tables, so a new opcode has no color until it is given one here (it does not compile). */
const OP_CLASS: Record<keyof typeof WrOpcode.values | keyof typeof WcOpcode.values | 'RECV', OpClass> = {
  IBV_WR_RDMA_WRITE: 'write', IBV_WR_RDMA_WRITE_WITH_IMM: 'write', IBV_WR_SEND: 'send', IBV_WR_SEND_WITH_IMM: 'send',
  IBV_WR_RDMA_READ: 'read', IBV_WR_ATOMIC_CMP_AND_SWP: 'atomic', IBV_WR_ATOMIC_FETCH_AND_ADD: 'atomic',
  IBV_WR_LOCAL_INV: 'other', IBV_WR_BIND_MW: 'other', IBV_WR_SEND_WITH_INV: 'send', IB_WR_RDMA_READ_WITH_INV: 'read',
  IB_WR_REG_MR: 'other',
  IBV_WC_SEND: 'send', IBV_WC_RDMA_WRITE: 'write', IBV_WC_RDMA_READ: 'read', IBV_WC_COMP_SWAP: 'atomic',
  IBV_WC_FETCH_ADD: 'atomic', IBV_WC_BIND_MW: 'other', IBV_WC_LOCAL_INV: 'other', IB_WC_REG_MR: 'other',
  IBV_WC_RECV: 'recv', IBV_WC_RECV_RDMA_WITH_IMM: 'recv', IBV_WC_DRIVER1: 'other',
  RECV: 'recv',
};

export function opClass(op: string): OpClass { return (OP_CLASS as Record<string, OpClass | undefined>)[op] ?? 'other'; }

function arc(cx: number, cy: number, r0: number, r1: number, a0: number, a1: number): string {
  const p = (r: number, a: number) => `${(cx + r * Math.sin(a)).toFixed(2)} ${(cy - r * Math.cos(a)).toFixed(2)}`;
  const large = a1 - a0 > Math.PI ? 1 : 0;
  return `M ${p(r1, a0)} A ${r1} ${r1} 0 ${large} 1 ${p(r1, a1)} L ${p(r0, a1)} A ${r0} ${r0} 0 ${large} 0 ${p(r0, a0)} Z`;
}

export function RingView({ ring, label, testid }: { ring: Ring | undefined; label: string; testid: string }) {
  if (!ring) return <div className="ring-box" data-testid={testid}><div className="muted small">{label}: no slots yet</div></div>;
  const depth = ring.depth;
  const size = 150; const cx = size / 2; const cy = size / 2; const r1 = 66; const r0 = 40;
  const visible = Math.min(depth, 256);
  const step = (2 * Math.PI) / visible;
  const bySlot = new Map<number, Slot>();
  for (const s of ring.slots.values()) { const i = s.abs % depth; const cur = bySlot.get(i); if (!cur || cur.abs < s.abs) bySlot.set(i, s); }
  const wedges = [];
  for (let i = 0; i < visible; i++) {
    const s = bySlot.get(i);
    const consumed = s ? s.abs < ring.consumer : false;
    const cls = s ? `slot op-${opClass(s.opcode)} ${s.ok ? '' : 'err'} ${consumed ? 'consumed' : 'live'}` : 'slot empty';
    wedges.push(
      <path key={i} d={arc(cx, cy, r0, r1, i * step + 0.01, (i + 1) * step - 0.01)} className={cls}
        data-testid={s ? 'ring-slot' : undefined} data-opcode={s?.opcode} data-status={s?.status}>
        <title>{s ? `slot ${i} (#${s.abs}): ${s.opcode} ${s.status} wr_id ${s.wrId}${s.text ? ` — ${s.text}` : ''}` : `slot ${i}: empty`}</title>
      </path>,
    );
  }
  // P outside the ring, C inside, each at the slot it points to
  const marker = (idx: number, name: string, cls: string) => {
    const a = ((idx % depth) % visible + 0.5) * step;
    const r = cls === 'prod' ? r1 + 7 : r0 - 8;
    const x = cx + r * Math.sin(a); const y = cy - r * Math.cos(a);
    return <text x={x} y={y + 4} className={`ring-mark ${cls}`} textAnchor="middle">{name}</text>;
  };
  const recent = [...ring.slots.values()].sort((a, b) => b.abs - a.abs).slice(0, 4);
  return (
    <div className="ring-box" data-testid={testid}>
      <svg viewBox={`0 0 ${size} ${size}`} width={size} height={size} role="img" aria-label={`${label}: producer ${ring.producer}, consumer ${ring.consumer}, depth ${depth}`}>
        {wedges}
        {marker(ring.producer, 'P', 'prod')}
        {marker(ring.consumer, 'C', 'cons')}
        <text x={cx} y={cy - 4} textAnchor="middle" className="ring-title">{label}</text>
        <text x={cx} y={cy + 12} textAnchor="middle" className="ring-sub">P {ring.producer} · C {ring.consumer}</text>
      </svg>
      <ul className="ring-list mono small" aria-label={`${label} latest slots`}>
        {recent.map((s) => (
          <li key={s.abs} className={s.ok ? '' : 'bad'} data-testid="ring-entry">
            <span className={`swatch op-${opClass(s.opcode)}`} />#{s.abs} {s.opcode} {s.status} wr_id {s.wrId}
          </li>
        ))}
      </ul>
    </div>
  );
}
