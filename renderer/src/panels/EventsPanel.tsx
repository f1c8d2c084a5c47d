import { NotBuilt } from '../components/ui.tsx';
export function EventsPanel() { return <NotBuilt what="Events panel" />; }
