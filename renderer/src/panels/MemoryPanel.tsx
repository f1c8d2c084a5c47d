// Memory and keys: buffers with a hex view (bytes changed by MemWrite events highlighted) and a heat strip,
// the MR registration form (access flags by rdma-core name, validated as you type), the key table and the
// address-space map. Everything drawn comes from replies (memory.read, mr.reg) and events. The forms and views live in
// panels/memory/.
import { ReregForm } from './ReregForm.tsx';
import { useConsole } from '../store/context.tsx';
import { hexAddr } from '../store/spec.ts';
import { Section } from '../components/ui.tsx';
import { AllocBufferForm, BufferList, HeatView, HexView, WriteForm } from './memory/Buffers.tsx';
import { FastRegForms, MwForms, RegMrForm } from './memory/KeyForms.tsx';
import { AddressMap, KeyTableView, UnknownObjects } from './memory/Keys.tsx';

export function MemoryPanel() {
  const buffers = useConsole((s) => s.buffers);
  const sel = useConsole((s) => s.selectedBuffer);
  const b = buffers.find((x) => x.handle === sel && !x.destroyed);
  const real = useConsole((s) => s.backend);
  return (
    <div className="stack">
      <UnknownObjects />
      <div className="row">
        <Section title="Buffers" testid="buffers-section"><BufferList /><AllocBufferForm /></Section>
        <Section title="Register memory region" testid="mr-section"><RegMrForm /><ReregForm /></Section>
      </div>
      {b && (
        <Section title={`Buffer ${b.handle} — ${hexAddr(b.addr)}, ${b.length} bytes`} testid="buffer-detail">
          <HeatView buffer={b} />
          <HexView buffer={b} />
          <WriteForm buffer={b} />
        </Section>
      )}
      <Section title="Keys (lkey / rkey = index << 8 | key byte)" testid="keys-section">
        {real && <p className="muted small" data-testid="keys-real-note">The keys {real.device} returned for this session&apos;s MRs and windows. Its key table itself (other entries, free slots, key states) is not visible on a real device.</p>}
        <KeyTableView />
      </Section>
      <Section title="Memory windows"><MwForms /></Section>
      <Section title="Fast-registration MRs (SG lists)">{real
        ? <p className="muted small" data-testid="fastreg-real-note">Not available on a real device from user space: ib_alloc_mr, ib_map_mr_sg and IB_WR_REG_MR are kernel verbs with no libibverbs form.</p>
        : <FastRegForms />}</Section>
      <Section title="Address-space map"><AddressMap /></Section>
    </div>
  );
}
