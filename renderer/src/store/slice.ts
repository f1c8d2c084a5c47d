// The seam between the console store's slices (zustand's slices pattern): each domain (ui + host, devices,
// memory & keys, queues, wire, events ingest, run) is a function of (set, get, ctx) returning its part of the
// state, and the store is their union (store.ts). `ctx` holds what slices share without putting it in the state:
// the transport, the mutable models, the dirty bits published once per frame, and the few helpers one slice owns
// and another calls (each filled in by its owner when the store is built).
import type { StoreApi } from 'zustand/vanilla';
import type { DeviceEvent, EventBatch, FrameBatch, HostStatus, Reply, RingSnapshot, Command, CommandInput, CommandName, ResultOf } from '../../../app/protocol/index.ts';
import type { EventRing, FilteredView } from './eventRing.ts';
import type { KeyChecks, KeyTable, MemoryMarks, QueueModel, WireLog } from './models.ts';
import type { PacketFates } from './ladder.ts';
import type { ConsoleState } from './store.ts';

// ------------------------------------------------------------------ transport (shape of renderer/src/transport)
export interface ConsoleTransport {
  call(command: Command): Promise<Reply>;
  onEvents(cb: (batch: EventBatch | FrameBatch | RingSnapshot | DeviceEvent[]) => void): unknown;
  onHost(cb: (h: HostStatus) => void): unknown;
  control(action: 'restart-host' | 'kill-host'): unknown;
  /** tell the host the console has drawn the events up to seq and how many more it asks for (optional: flow
   *  control of autorun) */
  ack?(seq: number, window?: number): unknown;
}

export type Scheduler = (cb: () => void) => void;

/** renderer-side latency samples: a batch's arrival -> the frame after the store published it (ms) */
export class LatencyStats {
  readonly samples = new Float64Array(8192);
  n = 0;
  add(ms: number) { this.samples[this.n++ % this.samples.length] = ms; }
  percentile(p: number): number {
    const k = Math.min(this.n, this.samples.length);
    if (!k) return NaN;
    const a = Array.from(this.samples.subarray(0, k)).sort((x, y) => x - y);
    return a[Math.min(k - 1, Math.floor((p / 100) * k))];
  }
  reset() { this.n = 0; }
}

export interface Model {
  latency: LatencyStats;
  ring: EventRing; view: FilteredView; keys: KeyTable; queues: QueueModel; wire: WireLog; marks: MemoryMarks; checks: KeyChecks;
  /** what became of each packet (lost, dropped, duplicated, retransmitted), for the wire view */
  fates: PacketFates;
}

type TrafficOut = NonNullable<ResultOf<'session.info'>['traffic']>;

/** what changed since the last published frame */
export interface Dirty { events: boolean; keys: boolean; queues: boolean; wire: boolean; memory: boolean; devices: boolean; hexBuffers: Set<number> }

export interface SliceCtx {
  readonly transport: ConsoleTransport | null;
  readonly model: Model;
  readonly dirty: Dirty;
  /** publish the dirty domains in the next frame */
  queueFlush(): void;
  /** buffers whose hex view is being read (one memory.read at a time per buffer) */
  readonly reading: Set<number>;
  // owned by the events slice (ingest.ts)
  loadRecent(): Promise<void>;
  // owned by the run slice
  syncTrafficPoll(): void;
  /** the load generator's state from a reply that carries it (engine.traffic, engine.step, session.info) */
  setTrafficFrom(result: { traffic?: TrafficOut | { on: false } | null }): void;
}

/** a command's arguments as a client sends them (defaults may be left out) */
export type ArgsOf<N extends CommandName> = Extract<CommandInput, { cmd: N }>['args'];

export type SetState = StoreApi<ConsoleState>['setState'];
export type GetState = StoreApi<ConsoleState>['getState'];
export type Slice<T> = (set: SetState, get: GetState, ctx: SliceCtx) => T;

/** mark a domain dirty and publish it next frame (after a reply changed a model) */
export function touched(ctx: SliceCtx, ...domains: ('keys' | 'queues' | 'wire' | 'memory' | 'events')[]): void {
  for (const d of domains) ctx.dirty[d] = true;
  ctx.queueFlush();
}
