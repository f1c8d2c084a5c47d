// Contract between the backend host's command executor and its users (the host process, the headless
// scenario runner, the CLI). Implemented by app/host/executor.ts over the native addon.
import type { Command, DeviceEvent, ErrorInfo } from '../protocol/index.ts';

export type ExecResult = { ok: true; result: unknown } | { ok: false; error: ErrorInfo };

export interface Executor {
  /** Validate-free execution of an already schema-validated command. Never throws; errors come back as values. */
  exec(command: Command): ExecResult;
  /** Events produced since the last drain (decoded, ready for the renderer), oldest first. */
  drainEvents(max?: number): DeviceEvent[];
  /** pcap file bytes of every packet on the session's wire so far. */
  pcap(): Uint8Array;
  /** Tear down the native session. */
  close(): void;
}

export interface ExecutorOptions { seed?: number }
