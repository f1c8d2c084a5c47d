// Says that the console is shown a sample of the device's events (free-running autorun), on the panels whose rows
// come from the event stream: the packet list and the sequence diagram hold the sampled packets only.
import { useConsole, useModel, useSampled } from '../store/context.tsx';

export function SampledBanner({ what }: { what: string }) {
  const free = useConsole((s) => s.autorun && s.freeRun);
  useConsole((s) => s.versions.events);   // the count below moves with the events (shown 4 times a second)
  const ring = useModel().ring;
  const notSent = useSampled(ring.dropped);
  if (!free) return null;
  return (
    <p className="note" role="status" data-testid="sampled-banner">
      Free running: the engine produces more events than a screen can draw, so the console is shown a sample of them
      (every state change, and the newest of the rest). {what} {notSent.toLocaleString()} events were not sent to the
      console so far. Pause to see every event again.
    </p>
  );
}
