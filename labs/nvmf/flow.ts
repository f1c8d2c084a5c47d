// The flow of each NVMe-oF command, per command id, as the agents lived it: every row is an action an agent took or
// a work completion it polled from the device (never text parsed back). Browser-safe: the panel draws these rows.

/** Who did it: the host driver, the target's software, or the device (the offload engine; NIC internals are
 *  modelled and the rows say so). */
export type Owner = 'host' | 'software' | 'device';

/** One step of one command. `t` is the device's virtual time (ns) when the agent acted or polled. */
export interface FlowRow {
  t: number; qid: number; cid: number; owner: Owner;
  /** the stage (software target: SPDK's request states; host: its driver steps; device: the offload steps) */
  stage: string;
  /** the verb behind it, rdma-core names (IBV_WC_RECV, IBV_WR_RDMA_READ, ...) */
  verb?: string;
  detail?: string;
}

/** A command from capsule to verified completion, for the panel and the replies. */
export interface CommandFlow {
  qid: number; cid: number; name: string; owner: Owner;
  /** NVMe status of the response (SCT << 8 | SC), null while none came */
  status: number | null;
  /** every byte of the data checked against what the host wrote (null: the command moves no data) */
  verified: boolean | null;
  rows: FlowRow[];
}

export class FlowLog {
  readonly rows: FlowRow[] = [];
  constructor(private readonly now: () => number, private readonly keep = 4096) {}
  add(r: Omit<FlowRow, 't'>): void { this.addAt(this.now(), r); }
  /** a row at a given time (the device's rows, from the time of their event) */
  addAt(t: number, r: Omit<FlowRow, 't'>): void {
    this.rows.push({ t, ...r });
    this.total++;
    if (this.rows.length > this.keep) this.rows.splice(0, this.rows.length - this.keep);
  }
  /** rows since position `from` (a value of `length`; a reply carries the rows of its own command), of those kept */
  since(from: number): FlowRow[] { return this.rows.slice(Math.max(0, from - (this.total - this.rows.length))); }
  /** rows added so far (kept or not) */
  get length(): number { return this.total; }
  private total = 0;
}

/** The software target's request states, in order (SPDK lib/nvmf/rdma.c enum spdk_nvmf_rdma_request_state, the
 *  subset a request of this target passes through). */
export const SW_STATES = [
  'NEW', 'TRANSFERRING_HOST_TO_CONTROLLER', 'READY_TO_EXECUTE', 'EXECUTING', 'EXECUTED',
  'TRANSFERRING_CONTROLLER_TO_HOST', 'COMPLETING', 'COMPLETED',
] as const;

/** The offloaded command's device steps, in order (the 2018 RFC's flow; NIC internals are modelled). */
export const DEVICE_STEPS = [
  'RECV', 'PARSE_CAPSULE', 'RDMA_READ', 'SQE_WRITE', 'SQ_DOORBELL', 'CQE', 'CQ_DOORBELL', 'RDMA_WRITE', 'SEND_RESPONSE',
] as const;
