// The Labs panel: the guided labs of labs/ (lab.list), a lab's sections and steps (lab.get), "Start" (lab.start: a
// fresh session with the lab's devices), "Do it" (lab.step: the host runs the step's commands, journaled and recorded
// like anything typed in another panel; earlier steps first), a step turning green when every expectation of its
// commands and check held (lab.status), and "Why": the rule and its public source. Replies are typed by the
// command descriptors (ResultOf<'lab.…'>). A step done by hand in the other panels turns green too: the host watches
// the event stream for the outcome the step expects (app/scenario/lab-watch.ts); the panel asks for the status again
// as the device's events arrive (at most twice a second).
import { useCallback, useEffect, useState } from 'react';
import { Lab } from '../../../app/protocol/lab.ts';
import type { ResultOf } from '../../../app/protocol/index.ts';
import { useConsole, useSampled } from '../store/context.tsx';
import { ErrorMessage, Pending, Section } from '../components/ui.tsx';

type Summary = ResultOf<'lab.list'>['labs'][number];
type Status = ResultOf<'lab.status'>;
type StepStatus = Status['steps'][number];

function stepState(s: StepStatus | undefined): 'holds' | 'failed' | 'todo' {
  if (!s?.done) return 'todo';
  return s.holds ? 'holds' : 'failed';
}

export function LabsPanel() {
  const run = useConsole((s) => s.run);
  const [labs, setLabs] = useState<Summary[] | null>(null);
  // the open lab is kept in the store's form fields: it stays open while the person works in the other panels
  const open = useConsole((s) => (s.forms.labs?.open as string | undefined) ?? null);
  const setForm = useConsole((s) => s.setFormField);
  const setOpen = useCallback((id: string) => setForm('labs', 'open', id), [setForm]);
  const [lab, setLab] = useState<Lab | null>(null);
  const [status, setStatus] = useState<Status | null>(null);
  const [why, setWhy] = useState<Record<string, boolean>>({});

  useEffect(() => { void run('lab.list', 'lab.list', {}).then((r) => setLabs(r?.labs ?? [])); }, [run]);
  useEffect(() => {
    if (!open) return;
    // lab.get's result is the lab.json as the host loaded it: read back through the lab schema, not cast
    void run('lab.get', 'lab.get', { id: open }).then((r) => { const p = r ? Lab.safeParse(r.lab) : null; setLab(p?.success ? p.data : null); });
    void run('lab.status', 'lab.status', { id: open }).then((r) => setStatus(r));
  }, [run, open]);

  // events arrived (whoever caused them): the host may now see a step done by hand
  const eventsVersion = useSampled(useConsole((s) => s.versions.events), 500);
  const started = !!status?.started;
  useEffect(() => {
    if (!open || !started) return;
    void run('lab.status', 'lab.status', { id: open }).then((r) => { if (r) setStatus(r); });
  }, [run, open, started, eventsVersion]);

  const start = async () => { if (open) setStatus(await run('lab.start', 'lab.start', { id: open })); };
  const doStep = async (step: string) => {
    if (!open) return;
    const r = await run('lab.step', 'lab.step', { id: open, step });
    if (r) setStatus(r);
  };
  const byId = new Map(status?.steps.map((s) => [s.id, s]) ?? []);

  return (
    <div className="panel-body labs" data-testid="labs-panel">
      <Section title="Labs" testid="lab-list">
        {labs === null ? <p className="muted">loading…</p> : labs.length === 0 ? <p className="muted">no labs in labs/</p> : (
          <ul className="lab-list">
            {labs.map((l) => (
              <li key={l.id}>
                <button type="button" className={open === l.id ? 'selected' : ''} data-testid={`lab-open-${l.id}`} aria-pressed={open === l.id} onClick={() => setOpen(l.id)}>
                  {l.title}
                </button>
                <span className="muted small"> {l.steps} steps — {l.question}</span>
              </li>
            ))}
          </ul>
        )}
        <ErrorMessage form="lab.list" />
      </Section>
      {open && lab ? (
        <Section title={lab.title} testid={`lab-${lab.id}`}
          actions={<><button type="button" data-testid="lab-start" onClick={() => void start()}>{status?.started ? 'Start over' : 'Start'}</button><Pending form="lab.start" /></>}>
          <p>{lab.goal}</p>
          <p className="small"><strong>The question it answers:</strong> {lab.question}</p>
          <p className="muted small">
            Start opens a fresh session with the lab&apos;s devices ({lab.devices.map((d) => `${d.name}: ${d.profile}`).join(', ')}). &quot;Do it&quot; runs a step&apos;s
            commands through the backend host (earlier steps first); the step turns green when every expectation of its commands and of its check held.
            A step done by hand in the other panels turns green when the outcome it expects (its completions, packets and key states; &quot;by hand&quot;
            below) is seen in the device&apos;s events after the previous such step; a setup step (objects only) cannot be seen that way.
          </p>
          <ErrorMessage form="lab.start" />
          <ErrorMessage form="lab.step" />
          {lab.sections.map((sec) => (
            <div key={sec.id} className="lab-section" data-testid={`lab-section-${sec.id}`}>
              <h3>{sec.title}</h3>
              {sec.text ? <p className="small">{sec.text}</p> : null}
              <ol className="lab-steps">
                {sec.steps.map((st) => {
                  const s = byId.get(st.id);
                  const state = stepState(s);
                  return (
                    <li key={st.id} className={`lab-step ${state}`} data-testid={`lab-step-${st.id}`} data-state={state}>
                      <div className="lab-step-head">
                        <span className="lab-badge" aria-label={state === 'holds' ? 'holds' : state === 'failed' ? 'failed' : 'not done'}>{state === 'holds' ? '✓' : state === 'failed' ? '✗' : '○'}</span>
                        <strong>{st.title}</strong>
                        <button type="button" data-testid={`lab-do-${st.id}`} disabled={!status?.started} onClick={() => void doStep(st.id)}>Do it</button>
                        {s?.byHand ? <span className="small muted lab-by-hand" data-testid={`lab-by-hand-${st.id}`}>done by hand</span> : null}
                        <button type="button" className="link" data-testid={`lab-why-${st.id}`} aria-expanded={!!why[st.id]} onClick={() => setWhy((w) => ({ ...w, [st.id]: !w[st.id] }))}>Why</button>
                      </div>
                      <p className="small">{st.text}</p>
                      <p className="muted small mono">{st.run.map((c) => (c as { cmd: string }).cmd).join(' · ')}{st.check?.length ? ` · check: ${st.check.map((c) => (c as { cmd: string }).cmd).join(' · ')}` : ''}</p>
                      {why[st.id] ? (
                        <div className="lab-why small" data-testid={`lab-why-text-${st.id}`}>
                          <div><strong>Rule:</strong> {st.why.rule}</div>
                          <div><strong>Source:</strong> {st.why.source}</div>
                        </div>
                      ) : null}
                      {st.modelled ? <p className="small lab-modelled" data-testid={`lab-modelled-${st.id}`}><strong>Modelled:</strong> {st.modelled}</p> : null}
                      {state === 'failed' && s ? <div className="error small" role="alert">{s.failures.join('; ')}</div> : null}
                    </li>
                  );
                })}
              </ol>
            </div>
          ))}
        </Section>
      ) : null}
    </div>
  );
}
