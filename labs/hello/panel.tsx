// The hello lab's tab: every hello message the wire has carried, as the lab's payload decoder reads it.
import { useConsole, useModel } from '../../renderer/src/store/context.tsx';
import type { PanelDef } from '../../renderer/src/panels/registry.ts';

export function HelloPanel() {
  useConsole((s) => s.versions.wire);   // redraw as packets arrive
  const rows = useModel().wire.listed;
  const seen: { id: number; summary: string }[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows.at(i);
    if (r.payload?.protocol === 'hello') seen.push({ id: r.id, summary: r.payload.summary });
  }
  return (
    <div className="panel-body stack" data-testid="lab-hello-tab">
      <p>Run the lab&apos;s step (Labs panel) or <code>hello.write</code>: each RDMA WRITE that carries a hello message is listed here.</p>
      {seen.length ? <ul data-testid="hello-messages">{seen.map((m) => <li key={m.id}>packet {m.id}: {m.summary}</li>)}</ul>
        : <p className="muted">no hello message on the wire yet</p>}
    </div>
  );
}

const panel: PanelDef = { id: 'hello', title: 'Lab: hello', order: 89, icon: '✉', summary: 'The template lab: one RC WRITE carrying a hello message', component: HelloPanel };
export default panel;
