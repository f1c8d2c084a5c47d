import { NotBuilt } from '../components/ui.tsx';
export function RunPanel() { return <NotBuilt what="Run panel" />; }
