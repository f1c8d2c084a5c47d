// The panel registry: registration order, replacement by id, removal, the id rule, and subscribers told of changes.
import { describe, expect, it } from 'vitest';
import { hasPanel, panelById, panels, registerPanel } from '../registry.ts';

const Dummy = () => null;

describe('panel registry', () => {
  it('lists panels by order, then id, and replaces a panel registered again under the same id', () => {
    const off = [
      registerPanel({ id: 't-b', title: 'B', order: 25, component: Dummy }),
      registerPanel({ id: 't-a', title: 'A', order: 25, component: Dummy }),
      registerPanel({ id: 't-first', title: 'First', order: 1, component: Dummy }),
    ];
    const ids = panels().map((p) => p.id);
    expect(ids.indexOf('t-first')).toBeLessThan(ids.indexOf('t-a'));
    expect(ids.indexOf('t-a')).toBe(ids.indexOf('t-b') - 1);
    off.push(registerPanel({ id: 't-a', title: 'A again', order: 25, component: Dummy }));
    expect(panelById('t-a')?.title).toBe('A again');
    expect(panels().filter((p) => p.id === 't-a')).toHaveLength(1);
    for (const f of off) f();
    expect(hasPanel('t-a') || hasPanel('t-b') || hasPanel('t-first')).toBe(false);
  });

  it('refuses an id that cannot be a URL hash', () => {
    expect(() => registerPanel({ id: 'Bad Id', title: 'x', order: 1, component: Dummy })).toThrow(/lower-case/);
    expect(hasPanel('Bad Id')).toBe(false);
  });

  it('registers the console\'s eight panels in tab order (Labs last)', async () => {
    await import('../builtin.ts');
    expect(panels().map((p) => p.id)).toEqual(['devices', 'memory', 'queues', 'wire', 'events', 'run', 'scenario', 'labs']);
    expect(panels().every((p) => p.summary)).toBe(true);
  });
});
