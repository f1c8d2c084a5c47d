// Handlers of the engine commands (app/protocol/commands/engine.ts).
import type { engineCommands } from '../../protocol/commands/engine.ts';
import { errnoName, fail, ok, u64n, type Handlers } from './handler.ts';
import { sendWr } from './queues.ts';

export const engineHandlers: Handlers<typeof engineCommands> = {
  'engine.step': (x, a) => {
    if (x.realSession) return x.onReal('engine.step', 'its engine runs in hardware, in real time; there is nothing to step');
    if (x.netDevices.size) return x.realTime('engine.step');
    if (x.s.runner_running()) return x.freeRun('engine.step');
    // the load generator (if on) refills the send queue every 256 steps and whenever the engine runs dry
    const r = x.s.step_traffic(a.count);
    return ok({ steps: u64n(r.steps), idle: r.idle, nowNs: x.s.now_ns(), ...(x.traffic ? { traffic: x.trafficView() } : {}) });
  },
  'engine.traffic': (x, a) => {
    if (x.realSession && a.on) return x.onReal('engine.traffic', 'the load generator drives the software device only');
    if (!a.on) {
      x.s.traffic_stop();
      return ok({ traffic: x.traffic ? x.trafficView() : { on: false as const } });
    }
    if (a.qp === undefined) return fail('EINVAL', 'engine.traffic: qp is required to turn the load generator on', 'command.args.qp');
    if (a.wrs === undefined) return fail('EINVAL', 'engine.traffic: wrs (the work requests to post) are required to turn the load generator on', 'command.args.wrs');
    const q = x.s.query_qp(a.qp);
    if (!q) return fail('EINVAL', `engine.traffic: no QP ${a.qp}`, 'command.args.qp');
    if (a.cq !== undefined && q.init.sendCq !== a.cq) return fail('EINVAL', `engine.traffic: CQ ${a.cq} is not the send CQ of QP ${a.qp} (${q.init.sendCq})`, 'command.args.cq');
    const s = x.s.traffic_start(a.qp, q.init.sendCq, a.wrs.map((w) => sendWr(x, w)));
    if (s.err) return fail(errnoName(s.err), `engine.traffic: ${s.msg}`, 'command.args.wrs');
    x.traffic = true;
    return ok({ traffic: x.trafficView() });
  },
  'engine.run': (x, a) => {
    if (x.realSession) return x.onReal('engine.run', 'its engine runs in hardware, in real time; there is nothing to run to idle');
    if (x.netDevices.size) return x.realTime('engine.run');
    if (x.s.runner_running()) return x.freeRun('engine.run');
    const steps = x.s.run(a.maxSteps);
    return ok({ steps, nowNs: x.s.now_ns() });
  },
  'engine.faults': (x, a) => {
    if (x.realSession) return x.onReal('engine.faults', 'faults are injected on the software device\'s wire; a real wire is not the console\'s');
    x.s.set_faults(a);
    return ok({ faults: a });
  },
  'engine.autorun': (x, a) => {
    if (a.on && x.realSession) return x.onReal('engine.autorun', 'its engine runs in hardware, in real time');
    if (a.on && x.netDevices.size) return x.realTime('engine.autorun');
    if (a.on && a.free && !x.replaying) {
      const s = x.s.runner_start(a.stepsPerSecond);
      if (s.err) return fail(errnoName(s.err), `engine.autorun: ${s.msg}`, 'command.args.stepsPerSecond');
    } else if (x.s.runner_running()) {
      x.stepsLeft += u64n(x.s.runner_stop());   // 0 when the host paused it (and journaled) first
    }
    x.autorun = { on: a.on, stepsPerSecond: a.stepsPerSecond, free: a.on && a.free };
    return ok({ autorun: x.autorun });
  },
};
