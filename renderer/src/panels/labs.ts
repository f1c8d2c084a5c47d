// Panels of labs: each lab manifest's `panel` (labs/<id>/index.ts), imported by the generated
// labs/panels.generated.ts, registered here (default export: a PanelDef, see registry.ts). A lab without a panel
// adds nothing here; a module whose default export is not a panel is reported in the console's devtools and
// skipped (one broken lab does not take the console down). The console's composition root for the labs.
import { LAB_PANELS } from '../../../labs/panels.generated.ts';
import { registerPanel, type PanelDef } from './registry.ts';

const isPanelDef = (v: unknown): v is PanelDef =>
  typeof v === 'object' && v !== null && typeof (v as PanelDef).id === 'string' && typeof (v as PanelDef).title === 'string'
  && typeof (v as PanelDef).component === 'function' && typeof (v as PanelDef).order === 'number';

for (const p of LAB_PANELS) {
  if (isPanelDef(p)) {
    try { registerPanel(p); } catch (e) { console.error(`lab panel ${p.id}: ${(e as Error).message}`); }
  } else console.error('a lab manifest\'s panel: the default export is not a panel (id, title, order, component)');
}
