// The QP state machine (rdma-core ibv_qp_state) as a React Flow diagram with the current state lit.
import { memo, useMemo } from 'react';
import { ReactFlow, type Edge, type Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { QpState } from '../../../app/protocol/index.ts';
import { useConsole } from '../store/context.tsx';

const POS: Record<string, [number, number]> = {
  IBV_QPS_RESET: [0, 0], IBV_QPS_INIT: [120, 0], IBV_QPS_RTR: [240, 0], IBV_QPS_RTS: [360, 0],
  IBV_QPS_SQD: [360, 70], IBV_QPS_SQE: [240, 70], IBV_QPS_ERR: [120, 70],
};
const EDGES: [string, string][] = [
  ['IBV_QPS_RESET', 'IBV_QPS_INIT'], ['IBV_QPS_INIT', 'IBV_QPS_RTR'], ['IBV_QPS_RTR', 'IBV_QPS_RTS'],
  ['IBV_QPS_RTS', 'IBV_QPS_SQD'], ['IBV_QPS_SQD', 'IBV_QPS_RTS'], ['IBV_QPS_RTS', 'IBV_QPS_SQE'], ['IBV_QPS_SQE', 'IBV_QPS_RTS'],
  ['IBV_QPS_RTS', 'IBV_QPS_ERR'], ['IBV_QPS_ERR', 'IBV_QPS_RESET'],
];

function QpStateDiagramInner({ state }: { state: number }) {
  const current = QpState.name(state);
  const theme = useConsole((s) => s.theme);
  const nodes: Node[] = useMemo(() => Object.entries(POS).map(([id, [x, y]]) => ({
    id, position: { x, y }, data: { label: id.replace('IBV_QPS_', '') },
    className: id === current ? 'qps-node current' : 'qps-node', draggable: false, selectable: false, connectable: false,
    style: { width: 80, padding: 4, fontSize: 11 },
  })), [current]);
  const edges: Edge[] = useMemo(() => EDGES.map(([s, t]) => ({
    id: `${s}-${t}`, source: s, target: t, animated: s === current, className: s === current ? 'qps-edge from-current' : 'qps-edge',
  })), [current]);
  return (
    <div className="qps" data-testid="qp-state-diagram" data-state={current} aria-label={`QP state ${current}`} role="img">
      <ReactFlow nodes={nodes} edges={edges} fitView fitViewOptions={{ padding: 0.1 }} nodesDraggable={false} nodesConnectable={false}
        elementsSelectable={false} panOnDrag={false} zoomOnScroll={false} zoomOnPinch={false} zoomOnDoubleClick={false}
        preventScrolling={false} proOptions={{ hideAttribution: true }} colorMode={theme} />
    </div>
  );
}
export const QpStateDiagram = memo(QpStateDiagramInner);
