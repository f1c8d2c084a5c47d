import { NotBuilt } from '../components/ui.tsx';
export function WirePanel() { return <NotBuilt what="Wire panel" />; }
