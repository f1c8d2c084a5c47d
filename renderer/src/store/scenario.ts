// The Scenario tab's slice: the recording the backend host keeps of this session (scenario.get), and the
// replay of a loaded scenario (scenario.load / step / run_to), both owned by the host (app/host/recorder.ts):
// replayed steps run on the real device through the host, expectations are checked there with
// app/scenario/run.ts. This slice only asks and shows; errors are filed under the form that caused them
// (the console store's `exec`), so they appear in that form's error-message.
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConsoleStore } from './store.ts';

export interface WcView { status: string; opcode?: string; byteLen?: unknown; wrId?: unknown }
export interface PacketSeen { opcode: string; syndrome?: string; count: number; from?: string }
export interface AsyncSeen { type: string; obj?: string }
/** what a recorded step did on the device: its error, its completions, the packets and async events during it */
export interface OutcomeView { ok: boolean; error?: { code: string; message: string }; wcs?: WcView[]; packet?: PacketSeen[]; asyncEvent?: AsyncSeen[] }
export interface StepView { cmd: string; args: Record<string, unknown>; as?: string; note?: string; expect?: Record<string, unknown> }
export interface Recording { name: string; description?: string; seed: number; devices: { name: string; profile: string }[]; steps: StepView[]; outcomes: (OutcomeView | null)[] }
export interface ReplayStep { number: number; cmd: string; ok: boolean; failures: string[]; error?: { code: string; message: string }; events: number }
export interface Replay {
  file: string; name: string; description: string; seed: number; devices: { name: string; profile: string }[];
  total: number; position: number; done: boolean; started: boolean; passed: boolean;
  failedStep?: number; failure?: string; digest?: string;
  steps: StepView[]; reports: ReplayStep[];
}

export interface ScenarioState {
  version: number;
  recording: Recording | null;
  replay: Replay | null;
  playing: boolean;
  /** fetch the recording and the replay state from the host */
  refresh(): Promise<void>;
  rename(from: string, to: string): Promise<boolean>;
  note(step: number, note: string): Promise<boolean>;
  /** drop a step from the recording (the device keeps what it did) */
  remove(step: number): Promise<boolean>;
  /** the scenario's own name and description (saved in the file) */
  meta(name: string, description: string): Promise<boolean>;
  /** "expect this": from step's outcome (only = one completion of a poll), or bytes/QP state read now */
  expect(args: { step: number; only?: number; bytes?: { addr: number; length: number }; qp?: number; packets?: boolean; asyncEvents?: boolean }): Promise<boolean>;
  /** the recording as scenario file text (validated by the host), or null (error shown under scenario.save) */
  save(): Promise<{ name: string; json: string } | null>;
  load(text: string, file: string): Promise<boolean>;
  step(): Promise<void>;
  runTo(step: number): Promise<void>;
  play(): Promise<void>;
  pause(): void;
  close(): Promise<void>;
}
export type ScenarioStore = StoreApi<ScenarioState>;

const isRec = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const nextFrame = () => new Promise<void>((r) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => r()); else setTimeout(r, 0);
});

export function createScenarioStore(console_: ConsoleStore): ScenarioStore {
  const exec = (form: string, command: unknown) => console_.getState().exec(form, command);
  let inflight = false;
  let again = false;

  const store = createStore<ScenarioState>()((set, get) => {
    /** merge a reply's recording / replay parts into the state */
    function absorb(result: unknown) {
      if (!isRec(result) || result.unchanged === true) return;
      const patch: Partial<ScenarioState> = {};
      if (typeof result.version === 'number') patch.version = result.version;
      if (isRec(result.recording)) patch.recording = result.recording as unknown as Recording;
      if ('replay' in result) {
        const r = result.replay;
        if (r === null) patch.replay = null;
        else if (isRec(r)) {
          const prev = get().replay;
          if (Array.isArray(r.steps)) patch.replay = r as unknown as Replay;
          else if (prev) {
            // step replies carry only the new reports, numbered from `from`
            const reports = prev.reports.slice(0, typeof result.from === 'number' ? result.from : prev.reports.length);
            if (Array.isArray(result.reports)) for (const r of result.reports as ReplayStep[]) reports.push(r);
            patch.replay = { ...prev, ...(r as unknown as Replay), steps: prev.steps, reports };
          }
        }
      }
      set(patch);
    }

    /** the first replay step resets the session in the host: forget what the console drew before it */
    async function beforeReplayCommand(): Promise<boolean> {
      const rp = get().replay;
      if (!rp || rp.started) return false;
      console_.getState().resetModels();
      return true;
    }
    /** after each replayed step the console asks the host what its objects are (session.info describes MRs and
     *  MWs — kind, PD, access — which their ObjectCreated events do not carry; QPs are queried): the key table and
     *  the QPs show what the device holds after the step, as they did when the session was live */
    async function afterReplayCommand(_fresh: boolean) {
      await console_.getState().syncObjects();
      await get().refresh();
    }

    return {
      version: -1, recording: null, replay: null, playing: false,

      async refresh() {
        if (inflight) { again = true; return; }
        inflight = true;
        try {
          do {
            again = false;
            const known = get().version;
            const r = await exec('scenario.get', { cmd: 'scenario.get', args: known >= 0 ? { known } : {} });
            if (r) absorb(r.result);
          } while (again);
        } finally { inflight = false; }
      },
      async rename(from, to) {
        const r = await exec('scenario.rename', { cmd: 'scenario.rename', args: { from, to } });
        if (r) absorb(r.result);
        return !!r;
      },
      async note(step, note) {
        const r = await exec(`scenario.note:${step}`, { cmd: 'scenario.note', args: { step, note } });
        if (r) absorb(r.result);
        return !!r;
      },
      async remove(step) {
        const r = await exec('scenario.remove', { cmd: 'scenario.remove', args: { step } });
        if (r) absorb(r.result);
        return !!r;
      },
      async meta(name, description) {
        const r = await exec('scenario.meta', { cmd: 'scenario.meta', args: { name, description } });
        if (r) absorb(r.result);
        return !!r;
      },
      async expect(args) {
        const form = args.bytes ? 'scenario.expect' : args.qp !== undefined ? 'scenario.expect:qp' : `scenario.expect:${args.step}`;
        const r = await exec(form, { cmd: 'scenario.expect', args });
        if (r) absorb(r.result);
        return !!r;
      },
      async save() {
        const r = await exec('scenario.save', { cmd: 'scenario.save', args: {} });
        if (!r || !isRec(r.result) || typeof r.result.json !== 'string') return null;
        return { name: String(r.result.name ?? 'scenario'), json: r.result.json };
      },
      async load(text, file) {
        set({ playing: false });
        const r = await exec('scenario.load', { cmd: 'scenario.load', args: { text, file } });
        if (r) absorb(r.result);
        return !!r;
      },
      async step() {
        const fresh = await beforeReplayCommand();
        const r = await exec('scenario.replay', { cmd: 'scenario.step', args: {} });
        if (r) absorb(r.result);
        await afterReplayCommand(fresh);
      },
      async runTo(step) {
        set({ playing: false });
        const fresh = await beforeReplayCommand();
        const r = await exec('scenario.replay', { cmd: 'scenario.run_to', args: { step } });
        if (r) absorb(r.result);
        await afterReplayCommand(fresh);
      },
      async play() {
        if (get().playing) return;
        set({ playing: true });
        // one step per request, a frame between steps so the console draws each one; pause stops the loop
        while (get().playing) {
          const rp = get().replay;
          if (!rp || rp.done) break;
          const before = rp.reports.length;
          await get().step();
          const now = get().replay;
          if (!now || now.reports.length === before || now.done || now.failedStep !== undefined) break;
          await nextFrame();
        }
        set({ playing: false });
      },
      pause() { set({ playing: false }); },
      async close() {
        set({ playing: false });
        const r = await exec('scenario.replay', { cmd: 'scenario.close', args: {} });
        if (r) absorb(r.result);
      },
    };
  });

  return store;
}

const stores = new WeakMap<ConsoleStore, ScenarioStore>();
/** One scenario slice per console store; it refreshes whenever the console ingests device events. */
export function scenarioStoreFor(c: ConsoleStore): ScenarioStore {
  let s = stores.get(c);
  if (!s) {
    s = createScenarioStore(c);
    stores.set(c, s);
    let seen = c.getState().versions.events;
    const sc = s;
    c.subscribe((st) => {
      if (st.versions.events === seen) return;
      seen = st.versions.events;
      if (watchers.get(sc)) void sc.getState().refresh();
    });
  }
  return s;
}

/** how many mounted views want live refreshes of a scenario store */
const watchers = new WeakMap<ScenarioStore, number>();
export function watchScenario(s: ScenarioStore): () => void {
  watchers.set(s, (watchers.get(s) ?? 0) + 1);
  void s.getState().refresh();
  return () => watchers.set(s, Math.max(0, (watchers.get(s) ?? 1) - 1));
}
