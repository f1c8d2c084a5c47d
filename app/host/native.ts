// Types of the native addon (native/addon: one binding file per domain, see addon.cpp) and its loader. Only Node
// processes load it (the backend host, the scenario runner, the CLI); never the renderer.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProfileQuirks } from '../protocol/quirks.ts';

/** 64-bit values: a number when <= 2^53-1, else a "0x..." hex string. */
export type U64 = number | string;

export interface NStatus { err: number; msg: string }
export interface NResult<T> extends NStatus { value?: T }
export interface NPost extends NStatus { badWr: number }

export interface NProfile {
  name: string; description: string; transport: string; deviceCapFlags: U64; atomicCap: number;
  maxQp: number; maxQpWr: number; maxSge: number; maxCq: number; maxCqe: number; maxMr: number; maxPd: number;
  maxMw: number; maxSrq: number; maxSrqWr: number; maxSrqSge: number; maxQpRdAtom: number; maxQpInitRdAtom: number;
  maxFastRegPageListLen: number; maxInlineData: number; activeMtu: number; maxMrSize: U64; pageSizeCap: U64;
  indirectReg: boolean; zeroBasedMr: boolean; readWithInv: boolean; lkeyEqRkey: boolean; keyBytePolicy: string;
  /** ib_req_notify_cq semantics: true may report missed events (rxe), false never does (mlx; an arm over unpolled CQEs fires) */
  notifyReportsMissed: boolean;
  /** where the profile behaves as Linux rxe rather than the IBA / ConnectX (app/protocol/quirks.ts) */
  quirks: ProfileQuirks;
}
export interface NGid { index: number; gid: string; type: string }
export interface NDevice { handle: number; name: string; profile: NProfile; nodeGuid: string; gids: NGid[]; portState: number }
export interface NBuffer { handle: number; addr: U64; length: U64 }
export interface NSge { addr: U64; length: number; lkey: number }
export interface NMr {
  handle: number; pd: number; lkey: number; rkey: number; addr: U64; length: U64; iova: U64; access: number;
  kind: string; state: string; sg: NSge[];
}
export interface NMw { handle: number; pd: number; rkey: number; type: number; state: string; mr: number; qp: number; addr: U64; length: U64; access: number }
export interface NQpCap { maxSendWr: number; maxRecvWr: number; maxSendSge: number; maxRecvSge: number; maxInlineData: number }
export interface NQpInit { sendCq: number; recvCq: number; srq?: number; qpType: number; sqSigAll: boolean; cap: NQpCap; /** kernel-only: the device's GSI QP (QP1; UD) */ gsi?: boolean }
export interface NQpAttr {
  qpState?: number; curQpState?: number; pathMtu?: number; qpAccessFlags?: number; qkey?: number; rqPsn?: number; sqPsn?: number;
  destQpNum?: number; pkeyIndex?: number; portNum?: number; maxRdAtomic?: number; maxDestRdAtomic?: number;
  minRnrTimer?: number; timeout?: number; retryCnt?: number; rnrRetry?: number; sgidIndex?: number; destDevice?: number;
  dgid?: Uint8Array;
}
export interface NQp {
  handle: number; qpNum: number; device: number;
  init: NQpInit & { pd: number; srq: number };
  attr: Required<Omit<NQpAttr, 'dgid'>> & { dgid: string };
}
export interface NWc {
  wrId: U64; status: number; opcode: number; vendorErr: number; byteLen: number; immData: number; invalidatedRkey: number;
  qpNum: number; srcQp: number; wcFlags: number; pkeyIndex: number; slid: number; sl: number; dlidPathBits: number;
  /** the profile rule (app/protocol/quirks.ts) that decided this completion, where rxe and the IBA / ConnectX differ */
  rule?: string;
}
export interface NSendWr {
  wrId?: U64; opcode: number; sendFlags?: number; sgList?: NSge[]; inlineData?: Uint8Array; immData?: number;
  remoteAddr?: U64; rkey?: number; compareAdd?: U64; swap?: U64; ah?: number; remoteQpn?: number; remoteQkey?: number;
  mw?: number; bindRkey?: number; bindMr?: number; bindAddr?: U64; bindLength?: U64; bindAccess?: number;
  regMr?: number; regKey?: number; regAccess?: number;
}
export interface NRecvWr { wrId?: U64; sgList?: NSge[] }
export interface NPacket {
  len: number; hex: string; error?: string; opcode?: number; opcodeName?: string; psn?: number; destQp?: number;
  [k: string]: unknown;
}
export interface NEvent {
  seq: U64; t: U64; kind: string; device: number; obj: number; objKind: string; a: U64; b: U64; c: U64; d: U64;
  text?: string; ok?: boolean; pkt?: NPacket; wc?: NWc; change?: number; keyState?: number;
}
export interface NNetGid { index: number; gid: string; type: string; ip?: string }
export interface NNetStats { txPackets: U64; txBytes: U64; rxPackets: U64; rxBytes: U64; rxDropped: U64; txDropped: U64 }
/** A device on the network: its UDP transport's interface, local port, GID table and counters. */
export interface NNet { interface: string; port: number; gids: NNetGid[]; stats: NNetStats }
export interface NInterface { name: string; index: number; mtu: number; up: boolean; loopback: boolean; addrs: string[] }
export interface NFaults { loss?: number; duplicate?: number; reorder?: number; delay?: number; delayNs?: number }

export interface NTraffic { on: boolean; qp: number; cq: number; wrs: number; posted: U64; completed: U64; stopped?: string }
export interface NRing {
  owner: number; device: number; queue: 'sq' | 'rq' | 'cq' | 'srq'; depth: number; producer: U64; consumer: U64; first: U64;
  slots: { wrId: U64; opcode: number; status: number; state: 'posted' | 'started' | 'done'; qpNum?: number }[];
}

export interface NativeSession {
  close(): void;
  create_device(profile: string, name?: string): NResult<number>;
  destroy_device(dev: number): NStatus;
  devices(): NDevice[];
  alloc_pd(dev: number): NResult<number>;
  dealloc_pd(pd: number): NStatus;
  alloc_buffer(length: number): NResult<NBuffer>;
  free_buffer(buf: number): NStatus;
  write_memory(addr: U64, data: Uint8Array): NStatus;
  read_memory(addr: U64, len: number): NResult<Buffer>;
  reg_mr(pd: number, addr: U64, length: U64, access: number, iova?: U64): NResult<NMr>;
  rereg_mr(mr: number, flags: number, pd: number, addr: U64, length: U64, access: number): NResult<NMr>;
  dereg_mr(mr: number): NStatus;
  alloc_mr(pd: number, maxNumSg: number, indirect: boolean): NResult<NMr>;
  map_mr_sg(mr: number, sg: NSge[], pageSize: number): NResult<number>;
  alloc_mw(pd: number, type: number): NResult<NMw>;
  dealloc_mw(mw: number): NStatus;
  bind_mw(qp: number, mw: number, wrId: U64, sendFlags: number, mr: number, addr: U64, length: U64, access: number): NResult<number>;
  mr_info(mr: number): NMr | null;
  mw_info(mw: number): NMw | null;
  create_cq(dev: number, cqe: number, withChannel: boolean): NResult<number>;
  /** the CQ as the device holds it: cqe is the depth granted (rxe rounds up to 2^n - 1) */
  cq_info(cq: number): { cq: number; device: number; cqe: number; channel: boolean } | null;
  destroy_cq(cq: number): NStatus;
  req_notify_cq(cq: number, solicitedOnly: boolean): NStatus;
  req_notify_cq_report_missed(cq: number, solicitedOnly: boolean): NResult<number>;
  poll_cq(cq: number, max: number): NWc[];
  get_cq_event(dev: number): NResult<number>;
  ack_cq_events(cq: number, n: number): NStatus;
  create_srq(pd: number, maxWr: number, maxSge: number, srqLimit: number): NResult<number>;
  modify_srq(srq: number, srqLimit: number): NStatus;
  destroy_srq(srq: number): NStatus;
  post_srq_recv(srq: number, wrs: NRecvWr[]): NPost;
  create_qp(pd: number, init: NQpInit): NResult<NQp>;
  modify_qp(qp: number, attr: NQpAttr, mask: number): NStatus;
  query_qp(qp: number): NQp | null;
  destroy_qp(qp: number): NStatus;
  create_ah(pd: number, destDevice: number, sgidIndex: number): NResult<number>;
  post_send(qp: number, wrs: NSendWr[]): NPost;
  post_recv(qp: number, wrs: NRecvWr[]): NPost;
  set_faults(f: NFaults): void;
  step(): boolean;
  run(maxSteps?: number): U64;
  now_ns(): U64;
  drain_events(max?: number): NEvent[];
  /** the load generator (native/include/vl/traffic.h): the WRs are converted once */
  traffic_start(qp: number, cq: number, wrs: NSendWr[]): NStatus;
  traffic_stop(): void;
  traffic_state(): NTraffic;
  /** engine steps with the load generator refilling every 256 steps (refused while the runner thread runs) */
  step_traffic(count: number): { steps: U64; idle: boolean };
  /** the free-running engine thread: steps per second; pause/take/stop return the steps run since the last take */
  runner_start(stepsPerSecond: number): NStatus;
  runner_stop(): U64;
  runner_pause(): U64;
  runner_resume(): void;
  runner_take(): U64;
  runner_running(): boolean;
  /** after each batch the runner keeps at most n queued events besides the state ones (0: all) */
  runner_set_event_budget(n: number): void;
  /** every queued event drained; the frame holds the state events and the newest `window` ones, the rest dropped */
  drain_events_sample(window: number): { frame: Uint8Array; count: number; first: U64; last: U64; dropped: number; objects: NEvent[] };
  queue_snapshot(maxSlots?: number): NRing[];
  last_seq(): U64;
  /** removes the queued events older than the newest `keep`, except state events; returns how many */
  sample_events(keep: number): U64;
  /** up to max events as protocol JSON text (native/addon/event_json.h); lifecycle events also as objects */
  drain_events_json(max?: number): { json: string; count: number; first: U64; objects: NEvent[] };
  /** up to max events as one binary event frame (app/protocol/eventframe.ts); lifecycle events also as objects */
  drain_events_frame(max?: number): { frame: Uint8Array; count: number; first: U64; objects: NEvent[] };
  set_event_capture(on: boolean): void;
  /** the in-process wire's data path (docs/perf.md): 'fast' (default) or 'strict' (every packet encoded, decoded, ICRC-checked) */
  set_data_path(path: 'fast' | 'strict'): NStatus;
  data_path(): 'fast' | 'strict';
  write_pcap(path: string): NStatus;
  /** UDP transport (native/src/net/udp.h): exactly one of interface / address */
  attach_net(dev: number, o: { interface?: string; address?: string; port?: number; peerPort?: number }): NResult<NNet>;
  detach_net(dev: number): NStatus;
  net_info(dev: number): NNet | null;
  /** poll every attached transport (waits up to timeoutNs only with one transport); datagrams + engine actions */
  net_poll(timeoutNs?: number): number;
  write_net_pcap(dev: number, path: string): NStatus;
}

/** The device's connection manager (vl/cm.h; native/addon/cm.cpp; docs/cm.md): the software session's only (a real
 *  device's CM is librdmacm's, not reached through these calls), hence its own interface. */
export interface NativeCmSession {
  cm_create_id(dev: number, portSpace?: number, qpType?: number): NResult<number>;
  cm_destroy_id(id: number): NStatus;
  cm_bind_addr(id: number, addr: NCmAddrIn): NStatus;
  /** ADDR_RESOLVED / ADDR_ERROR follows as an event (cm_get_events) */
  cm_resolve_addr(id: number, dst: NCmAddrIn, src?: NCmAddrIn | null, timeoutMs?: number): NStatus;
  cm_resolve_route(id: number, timeoutMs?: number): NStatus;
  cm_listen(id: number, backlog?: number): NStatus;
  cm_set_qp(id: number, qp: number): NStatus;
  cm_connect(id: number, param?: Partial<NCmConnParam>): NStatus;
  cm_accept(id: number, param?: Partial<NCmConnParam>): NStatus;
  cm_reject(id: number, privateData?: Uint8Array): NStatus;
  cm_disconnect(id: number): NStatus;
  cm_establish(id: number): NStatus;
  /** rdma_set_option(RDMA_OPTION_ID, ...): 0 = RDMA_OPTION_ID_TOS, 3 = RDMA_OPTION_ID_ACK_TIMEOUT */
  cm_set_option(id: number, option: number, value: number): NStatus;
  cm_id_info(id: number): NCmId | null;
  cm_ids(dev: number): NCmId[];
  cm_get_events(dev: number, max?: number): NCmEvent[];
  cm_counters(dev: number): { tx: U64; rx: U64; txRetries: U64; rxDuplicates: U64; rxDropped: U64; rejSent: U64; rxStale: U64 };
}

/** an IP endpoint of the CM: family follows the text when not given; no ip = any */
export interface NCmAddrIn { family?: 'ipv4' | 'ipv6'; ip?: string; port?: number }
export interface NCmAddr { family: 'ipv4' | 'ipv6' | ''; ip: string; port: number }
/** struct rdma_conn_param without the pointer */
export interface NCmConnParam {
  privateData: Uint8Array; responderResources: number; initiatorDepth: number; flowControl: number; retryCount: number;
  rnrRetryCount: number; srq: number; qpNum: number;
}
/** a CM ID as the device holds it (vl::CmIdInfo); state is enum ib_cm_state (CmState in app/protocol/enums.ts) */
export interface NCmId {
  id: number; dev: number; qp: number; listenId: number; portSpace: number; qpType: number; state: number; stateName: string;
  bound: boolean; addrResolved: boolean; routeResolved: boolean; listening: boolean; src: NCmAddr; dst: NCmAddr;
  sgidIndex: number; sgid: string; dgid: string; localCommId: number; remoteCommId: number; localQpn: number;
  remoteQpn: number; startingPsn: number; pathMtu: number; serviceId: U64; peerDev: number; remoteGuid: U64;
  tos: number; ackTimeout: number;
}
/** one rdma_cm event (vl::CmEvent); event is enum rdma_cm_event_type (CmEvent in app/protocol/enums.ts) */
export interface NCmEvent {
  id: number; listenId: number; event: number; eventName: string; status: number; param: NCmConnParam;
  remoteQpn: number; remoteQkey: number;
}

export interface NativeAddon {
  Session: { new (seed?: number): NativeSession & NativeCmSession; profiles(): NProfile[] };
  decodePacket(bytes: Uint8Array): NPacket;
  /** the device's payload decoder registry (native/include/vl/decoders.h) on one UDP payload (BTH..ICRC): fields
   *  flattened to dotted names with string values; null when no decoder claims it */
  decodePayloadNative(udp: Uint8Array, protocol?: string): { protocol: string; summary: string; fields: Record<string, string> } | null;
  /** Real RDMA devices as libibverbs sees them (loaded with dlopen; library=false when it is not installed). */
  ibverbsDevices(): { library: boolean; error?: string; devices: { name: string; guid: string }[] };
  /** Host network interfaces (getifaddrs). */
  netInterfaces(): NInterface[];
  /** Deliberate native crash (std::abort) for the "backend dies" demo and tests. */
  abort(): never;
  /** names of rdma-core enum values for drain_events_json (from app/protocol/enums.ts) */
  napiVersion: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const defaultAddonPath = path.join(repoRoot, 'build', 'Release', 'verbslab.node');

let cached: NativeAddon | undefined;
/** Load the addon (VERBSLAB_ADDON overrides the path). Throws a readable error when it is not built. */
export function loadAddon(file = process.env.VERBSLAB_ADDON || defaultAddonPath): NativeAddon {
  if (cached) return cached;
  if (!fs.existsSync(file)) {
    throw new Error(`native addon not built: ${file} is missing (run: node scripts/build.mjs addon)`);
  }
  const require = createRequire(import.meta.url);
  cached = require(file) as NativeAddon;
  return cached;
}
