// Host supervision (shared by the server and Electron): status through the life cycle, restart on request,
// replay problems in the status, messages of a killed process ignored.
import { describe, expect, it } from 'vitest';
import { HostSupervisor, describeExit, type HostStatus } from './supervisor.ts';

describe('HostSupervisor', () => {
  it('starting -> up (with replay problems) -> down -> restarted, ignoring the old process', () => {
    const seen: HostStatus[] = [];
    const procs: { id: number; killed: boolean }[] = [];
    let restarted = 0;
    const sv = new HostSupervisor({
      spawn: () => { const p = { id: procs.length + 1, killed: false }; procs.push(p); return p; },
      kill: (p) => { p.killed = true; },
      publish: (s) => seen.push(s),
      restarted: () => { restarted++; },
    });
    sv.start();
    const first = sv.child!;
    sv.ready(first, { pid: 11, journalEntries: 3, replay: { failed: [{}], skipped: [] } });
    expect(sv.status).toEqual({ type: 'host', state: 'up', pid: 11, journalEntries: 3, reason: 'journal replayed with 1 problem(s)', restarts: 0 });
    sv.control('restart-host');
    expect(first.killed).toBe(true);
    sv.exited(first, describeExit(null, 'SIGKILL', ['boom']));
    expect(seen.map((s) => s.state)).toEqual(['starting', 'up', 'down', 'starting']);
    sv.ready(first, { pid: 11 });                       // a late message of the old process changes nothing
    sv.exited(first, 'exited with code 1');
    expect(sv.status.state).toBe('starting');
    expect(seen[2]!.reason).toBe('killed by signal SIGKILL');
    expect(restarted).toBe(1);
    const second = sv.child!;
    expect(second).not.toBe(first);
    sv.ready(second, { pid: 12, journalEntries: 3 });
    expect(sv.status).toMatchObject({ state: 'up', pid: 12, restarts: 1 });
    expect(sv.status.reason).toBeUndefined();
    sv.control('kill-host');
    sv.exited(second, describeExit(null, 'SIGSEGV', ['', 'Segmentation fault in vl::Session']));
    expect(sv.status).toMatchObject({ state: 'down', reason: 'killed by signal SIGSEGV: Segmentation fault in vl::Session' });
    expect(sv.child).toBeNull();
    sv.control('restart-host');                         // down: a restart starts a new one at once
    expect(sv.status).toMatchObject({ state: 'starting', restarts: 2 });
    sv.close();
    sv.exited(sv.child!, 'exited with code 0');         // closing: not reported as a crash
    expect(sv.status.state).toBe('starting');
  });
});
