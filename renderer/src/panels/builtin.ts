// The console's own panels, registered in tab order (orders 10…70; labs may slot theirs in between).
import { registerPanel } from './registry.ts';
import { DevicesPanel } from './DevicesPanel.tsx';
import { MemoryPanel } from './MemoryPanel.tsx';
import { QueuesPanel } from './QueuesPanel.tsx';
import { WirePanel } from './WirePanel.tsx';
import { EventsPanel } from './EventsPanel.tsx';
import { RunPanel } from './RunPanel.tsx';
import { ScenarioPanel } from './ScenarioPanel.tsx';
import { LabsPanel } from './LabsPanel.tsx';

registerPanel({ id: 'devices', title: 'Devices', order: 10, component: DevicesPanel,
  summary: 'the software RDMA devices: capabilities by rdma-core name, limits, GID table; create devices and PDs, put one on the network' });
registerPanel({ id: 'memory', title: 'Memory & keys', order: 20, component: MemoryPanel,
  summary: 'buffers as hex, memory regions and windows with their lkey/rkey, fast registration, the key table' });
registerPanel({ id: 'queues', title: 'Queues', order: 30, component: QueuesPanel,
  summary: 'CQs, QPs and SRQs as rings; post sends and receives with every WR opcode, poll completions, QP states' });
registerPanel({ id: 'wire', title: 'Wire', order: 40, component: WirePanel,
  summary: 'every packet the devices sent, decoded (BTH, RETH, AETH…), a sequence diagram per QP, Save pcap' });
registerPanel({ id: 'events', title: 'Events', order: 50, component: EventsPanel,
  summary: 'the device\'s event log: every key check, state change, WQE and packet, filterable' });
registerPanel({ id: 'run', title: 'Run & faults', order: 60, component: RunPanel,
  summary: 'step or run the engine (virtual time), inject loss / duplication / reorder / delay, live rates' });
registerPanel({ id: 'scenario', title: 'Scenario', order: 70, component: ScenarioPanel,
  summary: 'the recording of this session: save it, add expectations, load one and replay it step by step' });
registerPanel({ id: 'labs', title: 'Labs', order: 80, component: LabsPanel,
  summary: 'guided labs: each step runs its verbs on the device, turns green when its expectations hold, and says why (spec section or kernel function)' });
