// The sessions switcher: this console's own device and the programs attached to it (`verbslab exec --console`,
// app/host/attach.ts), each with its state (live, stalled, ended and why). Choosing one shows it in every panel;
// the banner under it says whose device the panels show and that its forms are read-only.
import { useRootConsole } from '../store/context.tsx';
import { programName, readOnlyReason } from '../store/attached.ts';
import type { AttachedSession } from '../../../app/protocol/index.ts';

function stateText(s: AttachedSession): string {
  if (s.state === 'live') return 'live';
  return `${s.state} (${s.reason ?? 'no reason given'})`;
}

export function SessionsBar() {
  const attached = useRootConsole((s) => s.attached);
  const viewing = useRootConsole((s) => s.viewing);
  const view = useRootConsole((s) => s.viewSession);
  if (!attached.length) return null;
  const cur = attached.find((s) => s.session === viewing);
  const lost = cur ? cur.dropped.events + cur.dropped.frames : 0;
  return (
    <div className="sessions-bar">
      <nav aria-label="sessions" className="sessions" data-testid="sessions">
        <span className="muted small">Sessions:</span>
        <button type="button" aria-pressed={viewing === null} data-testid="session-embedded"
          className={viewing === null ? 'session active' : 'session'} onClick={() => view(null)}>this console's device</button>
        {attached.map((s) => (
          <button key={s.session} type="button" aria-pressed={viewing === s.session} data-testid={`session-${s.session}`}
            className={viewing === s.session ? `session active ${s.state}` : `session ${s.state}`} onClick={() => view(s.session)}
            title={s.argv.join(' ')}>
            {programName(s)} <span className={`badge ${s.state === 'live' ? 'on' : s.state === 'ended' ? '' : 'bad'}`} data-testid={`session-state-${s.session}`}>{s.state}</span>
          </button>
        ))}
      </nav>
      {cur && (
        <p className="note" role="note" data-testid="attached-banner">
          Attached program <b>{programName(cur)}</b>{cur.address ? <> on {cur.address}</> : null}: <span data-testid="attached-state">{stateText(cur)}</span>.
          {' '}{readOnlyReason(programName(cur))}. Shown as its device reports them: objects, keys, rings, packets and
          completions ({cur.events.toLocaleString()} events, {cur.frames.toLocaleString()} datagrams
          {lost ? <>; <b data-testid="attached-dropped">{lost.toLocaleString()} lost</b>: the program's queue was full because the console read too slowly</> : null}
          {cur.dropped.keptOut ? <>; the host keeps the newest {`${(cur.events - cur.dropped.keptOut).toLocaleString()}`}</> : null}); not its memory bytes.
        </p>
      )}
    </div>
  );
}
