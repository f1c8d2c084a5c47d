// Supervision of the backend host process, written once for both shells (the browser-mode server app/server and
// the Electron main process app/electron): the host's life cycle as the console sees it (HostStatus: starting, up,
// down with the reason), a restart on request (the new host replays the session journal), and the problems of that
// replay reported in the status. The shells only start the process and pass its 'ready' message and its exit here.
// No imports at all: the child is whatever the shell starts (a ChildProcess, a UtilityProcess), and the Electron
// main process (its own tsconfig, bundled by esbuild) imports this file alone.

/** The protocol's HostStatus message (app/protocol/messages.ts), restated here so this file imports nothing. */
export interface HostStatus {
  type: 'host'; state: 'starting' | 'up' | 'down'; reason?: string; pid?: number; journalEntries?: number; restarts?: number;
}

/** the host's 'ready' message (app/host/main.ts announce) */
export interface HostReady { pid?: number; journalEntries?: number; replay?: { failed?: unknown[]; skipped?: unknown[] } }

export interface SupervisorShell<C> {
  /** start a host process (its messages and exit are passed to ready() / exited() by the shell) */
  spawn(): C;
  /** stop it at once (the exit follows through exited()) */
  kill(child: C): void;
  /** the status changed: tell every console */
  publish(status: HostStatus): void;
  /** a new host was started after the previous one died on request (Electron hands out new ports) */
  restarted?(): void;
  log?(line: string): void;
}

/** "killed by signal SIGSEGV: <the last line the host wrote to stderr>" */
export function describeExit(code: number | null, signal: string | null, stderrTail: readonly string[] = []): string {
  const what = signal ? `killed by signal ${signal}` : `exited with code ${code}`;
  const last = stderrTail.filter((l) => l.trim()).slice(-1)[0];
  return last && (signal !== 'SIGKILL' && signal !== 'SIGTERM') ? `${what}: ${last.trim().slice(0, 300)}` : what;
}

export class HostSupervisor<C> {
  status: HostStatus = { type: 'host', state: 'starting', restarts: 0 };
  private current: C | null = null;
  private restarts = 0;
  private restartWanted = false;
  private closing = false;

  constructor(private readonly shell: SupervisorShell<C>) {}

  /** the running host process, if any */
  get child(): C | null { return this.current; }
  /** messages and exits of an older process (killed for a restart) are ignored */
  isCurrent(c: C): boolean { return c === this.current; }

  start(): void {
    const c = this.shell.spawn();
    this.current = c;
    this.set({ state: 'starting' });
  }

  ready(c: C, m: HostReady): void {
    if (!this.isCurrent(c)) return;
    const problems = (m.replay?.failed?.length ?? 0) + (m.replay?.skipped?.length ?? 0);
    this.set({ state: 'up', pid: m.pid, journalEntries: m.journalEntries, ...(problems ? { reason: `journal replayed with ${problems} problem(s)` } : {}) });
    this.shell.log?.(`backend host up (pid ${m.pid}, journal ${m.journalEntries} entries${problems ? `, ${problems} replay problem(s)` : ''})`);
  }

  exited(c: C, reason: string): void {
    if (!this.isCurrent(c)) return;
    this.current = null;
    if (this.closing) return;
    this.shell.log?.(`backend host down: ${reason}`);
    this.set({ state: 'down', reason });
    if (this.restartWanted) { this.restartWanted = false; this.restart(); }
  }

  /** the console's control messages: kill the host (the demo of a crash), restart it (the journal is replayed) */
  control(action: 'kill-host' | 'restart-host'): void {
    const c = this.current;
    if (action === 'kill-host') { if (c) this.shell.kill(c); return; }
    if (c) { this.restartWanted = true; this.shell.kill(c); } else this.restart();
  }

  /** the shell is closing: the exit that follows is not a crash */
  close(): void { this.closing = true; }

  private restart(): void {
    this.restarts++;
    this.start();
    this.shell.restarted?.();
  }

  private set(s: Omit<HostStatus, 'type' | 'restarts'>): void {
    this.status = { type: 'host', ...s, restarts: this.restarts };
    this.shell.publish(this.status);
  }
}
