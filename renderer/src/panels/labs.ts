// Panels of labs: each labs/<id>/panel.tsx that exists is loaded at build time and its default export (a PanelDef,
// see registry.ts) registered. A lab without a panel adds nothing here; a module whose default export is not a
// panel is reported in the console's devtools and skipped (one broken lab does not take the console down).
import { registerPanel, type PanelDef } from './registry.ts';

const modules = import.meta.glob<{ default?: unknown }>('../../../labs/*/panel.tsx', { eager: true });

const isPanelDef = (v: unknown): v is PanelDef =>
  typeof v === 'object' && v !== null && typeof (v as PanelDef).id === 'string' && typeof (v as PanelDef).title === 'string'
  && typeof (v as PanelDef).component === 'function' && typeof (v as PanelDef).order === 'number';

for (const [file, mod] of Object.entries(modules)) {
  if (isPanelDef(mod.default)) {
    try { registerPanel(mod.default); } catch (e) { console.error(`${file}: ${(e as Error).message}`); }
  } else console.error(`${file}: the default export is not a panel (id, title, order, component)`);
}
