// Lab 2's consumers: a block driver's completion path that switches on queue depth between an "interrupt context"
// handler (low latency at low depth) and an N-worker "thread context" pipeline (bandwidth at high depth). Requests
// must reach the upper layer in order. Each consumer is a small state machine; one call of act() is one atomic
// action (one verb, or one delivery), and the seeded scheduler (explorer.ts) chooses which consumer acts next.
//
// The handler follows the kernel's completion path (drivers/infiniband/core/cq.c, ib_poll_handler /
// ib_cq_completion_softirq): take the event, poll until empty, re-arm with ib_req_notify_cq(IB_CQ_NEXT_COMP |
// IB_CQ_REPORT_MISSED_EVENTS), and poll again when that returns > 0. The workers hand the CQ back to the handler
// when the depth falls: drain, arm, and (on a device that may report missed events) re-poll after a positive
// return. That re-poll runs in thread context while the arm may already have fired the handler: both poll the
// same CQ, and the worker delivers the older completion after the handler delivered the newer one.
import type { CqRig } from './rig.ts';

/** The variants the explorer compares (one table; the lab, the tests and the docs read it). */
export const VARIANTS = {
  'report-missed': {
    profile: 'rxe', reportMissedEvents: true, repoll: true, irqLock: false, expect: 'violation',
    label: 'notify may return > 0 (rxe_req_notify_cq), re-poll after a positive return, no lock',
  },
  'never-reports': {
    profile: 'cx', reportMissedEvents: true, repoll: true, irqLock: false, expect: 'in-order',
    label: 'notify always <= 0 (mlx4_ib_arm_cq / mlx5_ib_arm_cq): an arm over unpolled entries fires at once, nobody re-polls',
  },
  'irq-lock': {
    profile: 'rxe', reportMissedEvents: true, repoll: true, irqLock: true, expect: 'in-order',
    label: 'notify may return > 0; the CQ lock, taken with spin_lock_irqsave, wraps every poll, notify and re-poll (cost: interrupts off)',
  },
  'no-repoll': {
    profile: 'rxe', reportMissedEvents: false, repoll: false, irqLock: false, expect: 'stall',
    label: 'drain, then arm without IB_CQ_REPORT_MISSED_EVENTS and without re-poll: the lost wakeup',
  },
} as const;
export type VariantName = keyof typeof VARIANTS;
export type Variant = (typeof VARIANTS)[VariantName];

export type Ctx = 'irq' | `w${number}`;
export interface Delivery { step: number; wrId: number; expected: number; by: Ctx; inOrder: boolean }

export interface PipelineOptions { workers: number; total: number; maxDepth: number; low: number; high: number }

type HandlerPc = 'idle' | 'poll' | 'deliver' | 'arm';
type WorkerPc = 'acquire' | 'poll' | 'deliver' | 'arm' | 'repoll' | 'redeliver';

/** Everything the consumers share: the upper layer's view, the mode, the pipeline mutex, the IRQ-safe CQ lock. */
export class Pipeline {
  mode: 'irq' | 'thread' = 'irq';
  submitted = 0;
  delivered: Delivery[] = [];
  violations: Delivery[] = [];
  mutex: number | null = null;                 // the workers' pipeline mutex (thread context only)
  lock: Ctx | null = null;                     // irq-lock variant: the CQ lock, taken with IRQs off by the workers
  handler: { pc: HandlerPc; held: number | null } = { pc: 'idle', held: null };
  workers: { pc: WorkerPc; held: number | null }[];
  /** irq-lock cost: scheduler steps, and engine steps among them, with interrupts off in thread context. Counted in
   *  steps, not virtual ns: the engine's clock jumps to its next timer (an idle RC ACK timer is 67 ms at timeout 14),
   *  which says nothing about how long a CPU kept its interrupts off. */
  maskedSteps = 0; maskedEngineSteps = 0;
  /** interrupts held back because a worker had them off (steps the handler was due and could not run) */
  deferredIrqSteps = 0;
  step = 0;

  constructor(readonly rig: CqRig, readonly v: Variant, readonly o: PipelineOptions) {
    this.workers = Array.from({ length: o.workers }, () => ({ pc: 'acquire' as WorkerPc, held: null }));
  }

  get depth(): number { return this.submitted - this.delivered.length; }
  get done(): boolean { return this.delivered.length >= this.o.total; }
  /** interrupts are off: a worker holds the CQ lock with spin_lock_irqsave */
  get irqMasked(): boolean { return this.lock !== null && this.lock !== 'irq'; }

  /** the oldest request not yet delivered */
  private nextExpected = 0;
  private early = new Set<number>();

  /** Hands a completion to the upper layer. Out of order: an older request is still undelivered (one violation per
   *  overtaking delivery; the overtaken one, delivered later, then completes the gap). */
  private deliver(wrId: number, by: Ctx): void {
    const expected = this.nextExpected;
    const d: Delivery = { step: this.step + 1, wrId, expected, by, inOrder: wrId === expected };
    this.delivered.push(d);
    if (!d.inOrder) this.violations.push(d);
    this.early.add(wrId);
    while (this.early.delete(this.nextExpected)) this.nextExpected++;
  }

  // ------------------------------------------------------------------ who may act now
  canSubmit(): boolean { return this.submitted < this.o.total && this.depth < this.o.maxDepth; }
  canStep(): boolean { return !this.rig.idle; }
  handlerDue(): boolean { return this.handler.pc !== 'idle' || this.rig.view.pendingEvents > 0; }
  canHandle(): boolean {
    if (!this.handlerDue()) return false;
    if (this.v.irqLock && this.lock !== null && this.lock !== 'irq') return false;   // interrupts off / lock held
    return true;
  }
  canWork(i: number): boolean {
    const w = this.workers[i]!;
    if (w.pc === 'acquire') return this.mode === 'thread' && this.mutex === null && (!this.v.irqLock || this.lock === null);
    return true;
  }

  // ------------------------------------------------------------------ actions
  submit(): string {
    const id = this.submitted++;
    this.rig.post(id);
    return `post WRITE wr_id ${id}`;
  }

  deviceStep(): string {
    this.rig.step();
    if (this.irqMasked) this.maskedEngineSteps++;
    return 'engine.step';
  }

  /** One action of the interrupt-context handler. */
  handle(): string {
    const h = this.handler;
    switch (h.pc) {
      case 'idle':
        if (!this.rig.takeEvent()) return 'get_cq_event: none (spurious wakeup)';
        if (this.v.irqLock) this.lock = 'irq';
        h.pc = 'poll';
        return 'get_cq_event + ack_cq_events';
      case 'poll': {
        const wc = this.rig.poll();
        if (wc) { h.held = wc.wrId; h.pc = 'deliver'; return `poll -> wr_id ${wc.wrId}`; }
        h.pc = 'arm';
        return 'poll -> empty';
      }
      case 'deliver': {
        const id = h.held!;
        h.held = null;
        this.deliver(id, 'irq');
        if (this.depth > this.o.high) {              // queue deep: hand over to the thread pipeline, do not re-arm
          this.mode = 'thread';
          this.exitHandler();
          return `deliver wr_id ${id}; depth ${this.depth} > ${this.o.high}: switch to thread context`;
        }
        h.pc = 'poll';
        return `deliver wr_id ${id}`;
      }
      case 'arm': {
        const r = this.rig.arm(this.v.reportMissedEvents);
        if (r > 0 && this.v.repoll) { h.pc = 'poll'; return `req_notify -> ${r}: re-poll`; }
        this.exitHandler();
        return `req_notify -> ${r}`;
      }
    }
  }

  private exitHandler(): void {
    this.handler.pc = 'idle';
    if (this.lock === 'irq') this.lock = null;
  }

  /** One action of worker i (thread context). */
  work(i: number): string {
    const w = this.workers[i]!;
    const me: Ctx = `w${i}`;
    switch (w.pc) {
      case 'acquire':
        this.mutex = i;
        w.pc = 'poll';
        if (this.v.irqLock) { this.lock = me; return 'take the pipeline mutex; spin_lock_irqsave(CQ lock)'; }
        return 'take the pipeline mutex';
      case 'poll': {
        const wc = this.rig.poll();
        if (wc) { w.held = wc.wrId; w.pc = 'deliver'; return `poll -> wr_id ${wc.wrId}`; }
        if (this.depth <= this.o.low) { w.pc = 'arm'; return `poll -> empty; depth ${this.depth} <= ${this.o.low}: back to interrupts`; }
        this.release(i);
        return 'poll -> empty';
      }
      case 'deliver': {
        const id = w.held!;
        w.held = null;
        this.deliver(id, me);
        if (this.depth <= this.o.low) { w.pc = 'arm'; return `deliver wr_id ${id}; depth ${this.depth} <= ${this.o.low}: back to interrupts`; }
        this.release(i);
        return `deliver wr_id ${id}`;
      }
      case 'arm': {
        const r = this.rig.arm(this.v.reportMissedEvents);
        if (r > 0 && this.v.repoll) { w.pc = 'repoll'; return `req_notify -> ${r}: re-poll`; }
        this.mode = 'irq';
        this.release(i);
        return `req_notify -> ${r}: interrupt context again`;
      }
      case 'repoll': {
        const wc = this.rig.poll();
        if (wc) { w.held = wc.wrId; w.pc = 'redeliver'; return `re-poll -> wr_id ${wc.wrId}`; }
        w.pc = 'arm';
        return 're-poll -> empty';
      }
      case 'redeliver': {
        const id = w.held!;
        w.held = null;
        this.deliver(id, me);
        w.pc = 'repoll';
        return `deliver wr_id ${id}`;
      }
    }
  }

  private release(i: number): void {
    if (this.mutex === i) this.mutex = null;
    if (this.lock === `w${i}`) this.lock = null;   // spin_unlock_irqrestore
    this.workers[i]!.pc = 'acquire';
  }

  /** Book-keeping after every scheduler step (the cost of the lock). */
  account(): void {
    this.step++;
    if (this.irqMasked) {
      this.maskedSteps++;
      if (this.handlerDue()) this.deferredIrqSteps++;
    }
  }
}
