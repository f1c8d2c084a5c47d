// The descriptor table: loads as the renderer loads it (index.ts first: no import cycle reaches a table before it is
// built), and its facts are consistent.
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, DESCRIPTORS, KIND_FACTS, STEP_COMMANDS, answeredBy, createsOf, isReadOnly, isRecorded, networkPhrase } from './index.ts';

describe('command descriptors', () => {
  it('every command has a result schema; a creating command names a known kind', () => {
    for (const [name, d] of Object.entries(DESCRIPTORS)) {
      expect(typeof (d.result as { safeParse?: unknown }).safeParse, name).toBe('function');
      const k = createsOf(name);
      if (k) expect(KIND_FACTS[k], name).toBeDefined();
    }
  });
  it('console commands of host extensions are not scenario steps; the step list is the scenario format', () => {
    expect(STEP_COMMANDS).toBe(COMMAND_NAMES);
    expect(STEP_COMMANDS.some((c) => c.startsWith('scenario.') || c.startsWith('lab.'))).toBe(false);
    expect(answeredBy('lab.step')).toBe('host');
    expect(answeredBy('journal.get')).toBe('host');
    expect(answeredBy('qp.create')).toBe('device');
  });
  it('facts the journal, recorder and runner read', () => {
    expect(isReadOnly('qp.query') && isReadOnly('memory.read') && !isReadOnly('qp.modify')).toBe(true);
    expect(isRecorded('qp.query')).toBe(true);            // a read is a step (it backs expectations) …
    expect(isRecorded('device.list')).toBe(false);        // … observation of the console is not
    expect(networkPhrase('qp.modify', { qp: 1, attr: { dgid: '10.0.0.1' } })).toMatch(/remote host/);
    expect(networkPhrase('qp.modify', { qp: 1, attr: {} })).toBeNull();
    expect(networkPhrase('device.attachNet', {})).toMatch(/real network/);
  });
});
