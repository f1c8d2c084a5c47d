import { NotBuilt } from '../components/ui.tsx';
export function MemoryPanel() { return <NotBuilt what="Memory panel" />; }
