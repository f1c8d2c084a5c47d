import { NotBuilt } from '../components/ui.tsx';
export function QueuesPanel() { return <NotBuilt what="Queues panel" />; }
