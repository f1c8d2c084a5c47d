// The QP state machine (rdma-core ibv_qp_state) as a React Flow diagram with the current state lit.
import { memo, useMemo } from 'react';
import { Position, ReactFlow, type Edge, type Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { QpState } from '../../../app/protocol/index.ts';
import { useConsole } from '../store/context.tsx';

// top row: the connection path, left to right; bottom row: drained, send-queue error, error
const POS: Record<string, [number, number]> = {
  IBV_QPS_RESET: [0, 0], IBV_QPS_INIT: [95, 0], IBV_QPS_RTR: [190, 0], IBV_QPS_RTS: [285, 0],
  IBV_QPS_SQD: [380, 60], IBV_QPS_SQE: [285, 60], IBV_QPS_ERR: [95, 60],
};
const TOP = new Set(['IBV_QPS_RESET', 'IBV_QPS_INIT', 'IBV_QPS_RTR', 'IBV_QPS_RTS']);
const EDGES: [string, string, string?][] = [
  ['IBV_QPS_RESET', 'IBV_QPS_INIT'], ['IBV_QPS_INIT', 'IBV_QPS_RTR'], ['IBV_QPS_RTR', 'IBV_QPS_RTS'],
  ['IBV_QPS_RTS', 'IBV_QPS_SQD'], ['IBV_QPS_RTS', 'IBV_QPS_SQE', 'send WR error'],
  ['IBV_QPS_RTS', 'IBV_QPS_ERR', 'any error'], ['IBV_QPS_ERR', 'IBV_QPS_RESET', 'reset'],
];

function QpStateDiagramInner({ state }: { state: number }) {
  const current = QpState.name(state);
  const theme = useConsole((s) => s.theme);
  const nodes: Node[] = useMemo(() => Object.entries(POS).map(([id, [x, y]]) => ({
    id, position: { x, y }, data: { label: id.replace('IBV_QPS_', '') },
    className: id === current ? 'qps-node current' : 'qps-node', draggable: false, selectable: false, connectable: false,
    sourcePosition: TOP.has(id) ? Position.Right : Position.Left, targetPosition: TOP.has(id) ? Position.Left : Position.Top,
    style: { width: 62, padding: 2, fontSize: 11 },
  })), [current]);
  const edges: Edge[] = useMemo(() => EDGES.map(([s, t, label]) => ({
    id: `${s}-${t}`, source: s, target: t, type: 'smoothstep', label, animated: s === current,
    className: s === current ? 'qps-edge from-current' : 'qps-edge', labelStyle: { fontSize: 9 }, labelBgStyle: { fillOpacity: 0.7 },
  })), [current]);
  return (
    <div className="qps" data-testid="qp-state-diagram" data-state={current} aria-label={`QP state ${current}`} role="img">
      <ReactFlow nodes={nodes} edges={edges} fitView fitViewOptions={{ padding: 0.04 }} nodesDraggable={false} nodesConnectable={false}
        elementsSelectable={false} panOnDrag={false} zoomOnScroll={false} zoomOnPinch={false} zoomOnDoubleClick={false}
        preventScrolling={false} proOptions={{ hideAttribution: true }} colorMode={theme} />
    </div>
  );
}
export const QpStateDiagram = memo(QpStateDiagramInner);
