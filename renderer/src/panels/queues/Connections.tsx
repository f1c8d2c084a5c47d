// Connections (RDMA CM): every CM ID of the session's devices (cm.list), its addresses, QP, comm IDs and its IBA 12.9
// state lit on the path a connection walks; asked again whenever a CmState event arrives.
import { useEffect, useRef, useState } from 'react';
import type { ResultOf } from '../../../../app/protocol/index.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import { addrText, cmStateSince, pathOf } from './connections.ts';

type CmId = ResultOf<'cm.list'>['ids'][number];
const short = (s: string) => s.replace('IB_CM_', '').replace('_', ' ');
const hex = (v: number) => `0x${v.toString(16)}`;

export function ConnectionsTable() {
  const version = useConsole((s) => s.versions.events);
  const run = useConsole((s) => s.run);
  const model = useModel();
  const [ids, setIds] = useState<CmId[] | null>(null);
  const [supported, setSupported] = useState(true);
  const seen = useRef(-1);
  useEffect(() => {
    const ring = model.ring;
    if (seen.current >= 0 && !cmStateSince(ring, seen.current)) { seen.current = ring.total; return; }
    seen.current = ring.total;
    void run('cm.list', 'cm.list', {}).then((r) => { if (r) { setIds(r.ids); setSupported(r.supported); } });
  }, [version, model, run]);
  if (!supported) return <p className="muted" data-testid="cm-none">A real device's connections are its kernel's CM's (rdma cm / ss); the software device's CM is not in this session.</p>;
  if (!ids?.length) {
    return <p className="muted" data-testid="cm-none">None: a librdmacm program under <code>verbslab exec --console</code>, or <code>cm.*</code> from a scenario, makes connections.</p>;
  }
  return (
    <table className="table small" data-testid="cm-table">
      <thead><tr><th>ID</th><th>dev</th><th>port space</th><th>local</th><th>remote</th><th>QP</th><th>QPN local / remote</th><th>comm ID local / remote</th><th>state</th></tr></thead>
      <tbody>
        {ids.map((i) => (
          <tr key={i.id} data-testid="cm-row" data-state={i.state}>
            <td>{i.id}{i.listenId ? <span className="muted"> (of {i.listenId})</span> : null}</td><td>{i.device}</td><td>{i.portSpace.replace('RDMA_PS_', '')}</td>
            <td className="mono">{addrText(i.src)}</td><td className="mono">{i.listening ? '' : addrText(i.dst)}</td>
            <td>{i.qp || ''}</td><td className="mono">{i.localQpn ? `${hex(i.localQpn)} / ${hex(i.remoteQpn)}` : ''}</td>
            <td className="mono">{i.localCommId ? `${hex(i.localCommId)} / ${hex(i.remoteCommId)}` : ''}</td>
            <td><span className="cm-path" aria-label={`CM state ${i.state}`}>
              {pathOf(i).map((st, k) => <span key={st}>{k ? ' → ' : ''}<span className={st === i.state ? 'cm-state current' : 'cm-state'}>{short(st)}</span></span>)}
            </span></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
