// First run: one screen saying what the console is and where to start. Shown to a console opened without a panel in
// its URL and never dismissed before (localStorage vl.oriented); a returning user lands on the panel of the URL or the
// one they left. The list of panels is the registry's, so a lab's panel appears here as soon as it registers; the
// Labs panel (id "labs", from the lab platform) is the place to start when it exists.
import { useConsole } from '../store/context.tsx';
import { usePanels } from '../panels/registry.ts';

export function Orientation({ onClose }: { onClose: () => void }) {
  const panels = usePanels();
  const setPanel = useConsole((s) => s.setPanel);
  const labs = panels.find((p) => p.id === 'labs');
  const go = (id: string) => { setPanel(id); onClose(); };
  return (
    <section className="card orientation" data-testid="orientation" aria-labelledby="orientation-title">
      <header className="card-head"><h2 id="orientation-title">Welcome to Verbs Lab</h2>
        <button type="button" className="secondary" data-testid="orientation-close" onClick={onClose}>Close</button></header>
      <div className="card-body stack">
        <p>
          Verbs Lab runs a <strong>software RDMA device</strong> inside this console: real memory, real RoCEv2 packets (with ICRC),
          the key checks a NIC makes and the work-completion statuses an RDMA engineer expects, under rdma-core's names. Time is
          virtual: nothing moves until you step or run the engine (the run bar at the top).
        </p>
        {labs ? (
          <p data-testid="orientation-labs">
            <strong>Start with a lab:</strong> a guided lab sets up the objects, runs each step and checks it.{' '}
            <button type="button" className="primary" data-testid="orientation-open-labs" onClick={() => go('labs')}>Open the Labs panel</button>
          </p>
        ) : (
          <p data-testid="orientation-labs">
            <strong>Labs:</strong> guided labs will have their own <em>Labs</em> panel here (one tab per lab platform); they are not in
            this console yet. Until then, try the first steps below, or load a scenario in the Scenario panel.
          </p>
        )}
        <div>
          <h3>First steps by hand</h3>
          <ol className="small">
            <li>Devices: allocate a PD on the device (<code>ibv_alloc_pd</code>).</li>
            <li>Memory &amp; keys: allocate two buffers and register an MR on each (<code>ibv_reg_mr</code>); the key table shows their lkey/rkey.</li>
            <li>Queues: create a CQ and two RC QPs, connect them, post an RDMA WRITE, then <em>Run to idle</em>.</li>
            <li>Wire: see the packets and the ACK on the sequence diagram; Scenario: save what you did and replay it.</li>
          </ol>
        </div>
        <div>
          <h3>The panels</h3>
          <ul className="small orientation-panels">
            {panels.map((p) => (
              <li key={p.id}><button type="button" className="link" data-testid={`orientation-go-${p.id}`} onClick={() => go(p.id)}>{p.title}</button>
                {p.summary ? <span className="muted"> — {p.summary}</span> : null}</li>
            ))}
          </ul>
        </div>
      </div>
    </section>
  );
}
