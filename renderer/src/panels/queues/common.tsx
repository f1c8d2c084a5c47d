// Shared by the Queues panel's forms and cards: device names, the live objects, and QP pickers that show each QP's
// state (a QP in ERR is still listed, marked, and never the default).
import { QpState } from '../../../../app/protocol/index.ts';
import { useConsole, useModel } from '../../store/context.tsx';
import type { QpView } from '../../store/models.ts';
import { fmtHex } from '../../format.ts';

/** "left" for an object on device left: MR via its PD, QP via its device */
export function useNames() {
  const pds = useConsole((s) => s.pds);
  const devices = useConsole((s) => s.devices);
  const dev = (h: number) => devices.find((d) => d.handle === h)?.name ?? (h ? `dev ${h}` : '?');
  const pdDev = (pd: number) => dev(pds.find((p) => p.handle === pd)?.device ?? 0);
  return { dev, pdDev };
}

export function useLiveObjects() {
  useConsole((s) => s.versions.queues);
  const model = useModel();
  const qps = [...model.queues.qps.values()].filter((q) => !q.destroyed);
  const cqs = [...model.queues.cqs.values()].filter((c) => !c.destroyed);
  const srqs = [...model.queues.srqs.values()].filter((s) => !s.destroyed);
  return { model, qps, cqs, srqs };
}

export const stateName = (s: number) => QpState.name(s).replace('IBV_QPS_', '');

/** "qp 5 (QPN 0x11) on vlrxe0 · RTS" */
export function qpLabel(q: QpView, dev: (h: number) => string): string {
  return `qp ${q.handle} (QPN ${fmtHex(q.qpn)}) on ${dev(q.device)} · ${q.type.replace('IBV_QPT_', '')} · ${stateName(q.state)}`;
}

/** the QP a picker shows when the user chose none: the first ready to send (RTS), else the first not in
 *  error; among those `accept` prefers (all of them when it prefers none) */
export function defaultQp(qps: QpView[], accept: (q: QpView) => boolean = () => true): QpView | undefined {
  const acc = qps.filter(accept);
  const ok = acc.length ? acc : qps;
  return ok.find((q) => q.state === QpState.values.IBV_QPS_RTS) ?? ok.find((q) => q.state !== QpState.values.IBV_QPS_ERR) ?? ok[0];
}

export function QpOptions({ qps }: { qps: QpView[] }) {
  const { dev } = useNames();
  return <>{qps.map((x) => <option key={x.handle} value={x.handle}>{qpLabel(x, dev)}</option>)}</>;
}
