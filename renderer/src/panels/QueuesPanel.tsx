// Queues: CQs, QPs and SRQs as rings (slots from Wqe*/Cqe events), the QP state machine with the current state
// lit, CQ arming and completion channels; create / connect / modify / destroy / post / poll. Every action is a
// protocol command. The forms and cards live in panels/queues/.
import { useConsole } from '../store/context.tsx';
import { Section } from '../components/ui.tsx';
import { RemoteConnectForm } from './RemoteConnect.tsx';
import { ConnectForm, CreateCqForm, CreateQpForm, CreateSrqForm } from './queues/CreateForms.tsx';
import { CreateAhForm, PostSendForm } from './queues/PostSendForm.tsx';
import { CqCard, PostRecvForm, QpCard, SrqCard } from './queues/Cards.tsx';
import { useLiveObjects, useNames } from './queues/common.tsx';
import { ConnectionsTable } from './queues/Connections.tsx';

/** Free running: says where the rings come from when the events reach us sampled (QueueModel.snapshotSeq). */
function SampledNote() {
  const { model } = useLiveObjects();
  const free = useConsole((s) => s.autorun && s.freeRun);
  const q = model.queues;
  if (q.snapshotSeq === null || (!free && !q.stale)) return null;
  return (
    <p className="note" role="status" data-testid="rings-sampled">
      The engine is free running faster than the console draws, so the event stream reaches it sampled.
      {q.stale ? ' Events were dropped since the last snapshot: the rings below are as the device held them ' : ' The rings below are as the device held them '}
      after event #{q.snapshotSeq.toLocaleString()} (its own snapshot of each queue, a few times a second), not rebuilt from the events.
    </p>
  );
}

export function QueuesPanel() {
  const { qps, cqs, srqs } = useLiveObjects();
  const { dev } = useNames();
  const hasUd = qps.some((q) => q.type === 'IBV_QPT_UD');
  return (
    <div className="stack">
      <SampledNote />
      <div className="row">
        <Section title="Create CQ"><CreateCqForm /></Section>
        <Section title="Create QP"><CreateQpForm /></Section>
      </div>
      <div className="row">
        <Section title="Connect two RC QPs (qp.connect)"><ConnectForm /></Section>
        <Section title="Connect a QP to a remote host (qp.connect remote)" testid="remote-connect-section"><RemoteConnectForm qps={qps} dev={dev} /></Section>
      </div>
      <div className="row">
        <Section title="Create SRQ"><CreateSrqForm /></Section>
        {hasUd && <Section title="Address handle (UD)" testid="ah-section"><CreateAhForm /></Section>}
      </div>
      <div className="row">
        <Section title="Post send" testid="post-send-section"><PostSendForm /></Section>
        <Section title="Post receive"><PostRecvForm /></Section>
      </div>
      <Section title="Completion queues" testid="cqs-section">
        {cqs.length ? <div className="qgrid">{cqs.map((c) => <CqCard key={c.handle} handle={c.handle} />)}</div> : <p className="muted">No CQs.</p>}
      </Section>
      <Section title="Queue pairs" testid="qps-section">
        {qps.length ? <div className="qgrid">{qps.map((q) => <QpCard key={q.handle} handle={q.handle} />)}</div> : <p className="muted">No QPs.</p>}
      </Section>
      <Section title="Connections (RDMA CM)" testid="cm-section"><ConnectionsTable /></Section>
      {srqs.length > 0 && (
        <Section title="Shared receive queues">
          <div className="qgrid">{srqs.map((s) => <SrqCard key={s.handle} handle={s.handle} />)}</div>
        </Section>
      )}
    </div>
  );
}
