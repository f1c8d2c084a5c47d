// The CQ timeline of lab 2: one CQ's state (entries, armed or not, completion events pending on the channel, events
// taken and not yet acknowledged) folded from the device's event stream and the replies of the CQ verbs. The rig
// (rig.ts) and the lab's panel read it; one fold, no second copy of the rules.
//   Cqe        d = the CQ's depth after the insert             -> entries
//   CqArmed    a = 1 solicited only, 0 next completion          -> armed
//   CompEvent  an event queued on the device's channel          -> armed off (one-shot), pendingEvents + 1
//   AsyncEvent IBV_EVENT_CQ_ERR on this CQ                      -> overrun
// Polls and get_event / ack_events emit no event: their replies move entries, pendingEvents and unacked.
import type { DeviceEvent } from '../../app/protocol/index.ts';

/** What the lab knows about one CQ at one moment (a timeline row). */
export interface CqView {
  entries: number;            // CQEs queued and not yet polled
  armed: boolean;             // an ibv_req_notify_cq is outstanding (one-shot)
  solicitedOnly: boolean;     // ... for a solicited completion only
  pendingEvents: number;      // completion events queued on the channel, not yet taken by ibv_get_cq_event
  unacked: number;            // events taken and not yet acknowledged (ibv_destroy_cq waits for these)
  overrun: boolean;           // IBV_EVENT_CQ_ERR seen
}

export interface TimelineRow { seq: number; what: string; cq: CqView }

export const emptyView = (): CqView => ({ entries: 0, armed: false, solicitedOnly: false, pendingEvents: 0, unacked: 0, overrun: false });

export class CqTimeline {
  readonly view: CqView = emptyView();
  readonly rows: TimelineRow[] = [];
  private seq = 0;

  /** `keepRows`: record a row per change (the panel); the explorer only needs the current view. */
  constructor(public cq: number, private readonly keepRows = false) {}

  private row(what: string, seq?: number): void {
    if (seq !== undefined) this.seq = seq;
    if (this.keepRows) this.rows.push({ seq: this.seq, what, cq: { ...this.view } });
  }

  /** Folds device events; events of other objects are ignored. */
  onEvents(evs: readonly DeviceEvent[]): void {
    for (const e of evs) {
      if (e.obj !== this.cq || !this.cq) continue;
      const v = this.view;
      switch (e.kind) {
        case 'Cqe': v.entries = Number(e.d); this.row(`CQE (depth ${v.entries})`, e.seq); break;
        case 'CqArmed': v.armed = true; v.solicitedOnly = Number(e.a) === 1; this.row(v.solicitedOnly ? 'armed (solicited)' : 'armed (next)', e.seq); break;
        case 'CompEvent': v.armed = false; v.solicitedOnly = false; v.pendingEvents++; this.row('completion event', e.seq); break;
        case 'AsyncEvent': v.overrun = true; this.row('IBV_EVENT_CQ_ERR', e.seq); break;
        default: break;
      }
    }
  }

  /** ibv_poll_cq returned n completions. */
  polled(n: number): void {
    this.view.entries = Math.max(0, this.view.entries - n);
    this.row(n ? `poll: ${n}` : 'poll: empty');
  }
  /** ibv_get_cq_event returned this CQ. */
  gotEvent(): void {
    this.view.pendingEvents = Math.max(0, this.view.pendingEvents - 1);
    this.view.unacked++;
    this.row('get_cq_event');
  }
  /** ibv_ack_cq_events(cq, n) succeeded. */
  acked(n: number): void {
    this.view.unacked = Math.max(0, this.view.unacked - n);
    this.row(`ack_cq_events ${n}`);
  }
}
