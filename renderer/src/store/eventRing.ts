// The event log's storage: a ring of typed arrays plus a small string table, so a million events cost a
// few typed arrays instead of a million JS objects (docs/console.md). Rows are addressed by their absolute
// position (0 = first event ever ingested); positions older than `size` are gone.
import { F_BIG, F_OK, type DeviceEvent, type EventFrame } from '../../../app/protocol/index.ts';

/** Interns short repeated strings (event kinds, object kinds) into small integers. */
export class StringTable {
  readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();
  id(s: string): number {
    let i = this.ids.get(s);
    if (i === undefined) { i = this.strings.length; this.strings.push(s); this.ids.set(s, i); }
    return i;
  }
  get(i: number): string { return this.strings[i] ?? ''; }
  has(s: string): boolean { return this.ids.has(s); }
  lookup(s: string): number { return this.ids.get(s) ?? -1; }
}

export interface EventRow {
  pos: number; seq: number; t: number; kind: string; device: number; obj: number; objKind: string;
  a: number; b: number; c: number; d: number; text: string; ok: boolean;
}

export class EventRing {
  readonly capacity: number;
  readonly seq: Float64Array; readonly t: Float64Array;
  readonly kind: Uint16Array; readonly objKind: Uint16Array;
  readonly device: Uint32Array; readonly obj: Uint32Array;
  readonly a: Float64Array; readonly b: Float64Array; readonly c: Float64Array; readonly d: Float64Array;
  readonly flags: Uint8Array;                   // bit0: ok
  readonly text: (string | undefined)[];        // per-slot explanation (old ones are overwritten and collected)
  readonly kinds = new StringTable();
  readonly objKinds = new StringTable();
  /** absolute count of events ever pushed */
  total = 0;
  /** events the host reported as dropped before they reached us */
  dropped = 0;

  constructor(capacity = 1 << 20) {
    this.capacity = capacity;
    this.seq = new Float64Array(capacity); this.t = new Float64Array(capacity);
    this.kind = new Uint16Array(capacity); this.objKind = new Uint16Array(capacity);
    this.device = new Uint32Array(capacity); this.obj = new Uint32Array(capacity);
    this.a = new Float64Array(capacity); this.b = new Float64Array(capacity);
    this.c = new Float64Array(capacity); this.d = new Float64Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.text = new Array(capacity);
  }

  /** oldest absolute position still held */
  get first(): number { return Math.max(0, this.total - this.capacity); }
  get size(): number { return Math.min(this.total, this.capacity); }

  push(e: DeviceEvent): number {
    const pos = this.total++;
    const i = pos % this.capacity;
    this.seq[i] = e.seq; this.t[i] = e.t;
    this.kind[i] = this.kinds.id(e.kind); this.objKind[i] = this.objKinds.id(e.objKind);
    this.device[i] = e.device >>> 0; this.obj[i] = e.obj >>> 0;
    this.a[i] = e.a; this.b[i] = e.b; this.c[i] = e.c; this.d[i] = e.d;
    this.flags[i] = e.ok === false ? 0 : 1;
    this.text[i] = e.text || undefined;
    return pos;
  }

  // a frame's kind / object-kind byte -> this ring's string ids (-1: not seen yet)
  private readonly kindOf = new Int32Array(256).fill(-1);
  private readonly objKindOf = new Int32Array(256).fill(-1);

  /** push event j of a binary event frame, copied from its columns (the same row push(f.event(j)) gives); `text`:
   *  its text when the caller has it already */
  pushFrameEvent(f: EventFrame, j: number, text = f.text(j)): number {
    const pos = this.total++;
    const i = pos % this.capacity;
    const fl = f.flags[j]!;
    this.seq[i] = f.seq[j]!; this.t[i] = f.t[j]!;
    const k = f.kind[j]!;
    this.kind[i] = this.kindOf[k]! >= 0 ? this.kindOf[k]! : (this.kindOf[k] = this.kinds.id(f.kindName(j)));
    const o = f.objKind[j]!;
    this.objKind[i] = o === 255 ? this.objKinds.id(f.objKindName(j)) : this.objKindOf[o]! >= 0 ? this.objKindOf[o]! : (this.objKindOf[o] = this.objKinds.id(f.objKindName(j)));
    this.device[i] = f.device[j]!; this.obj[i] = f.obj[j]!;
    if (fl & F_BIG) { const [a, b, c, d] = f.nums(j); this.a[i] = a; this.b[i] = b; this.c[i] = c; this.d[i] = d; }
    else { this.a[i] = f.a[j]!; this.b[i] = f.b[j]!; this.c[i] = f.c[j]!; this.d[i] = f.d[j]!; }
    this.flags[i] = fl & F_OK ? 1 : 0;
    this.text[i] = text || undefined;
    return pos;
  }

  holds(pos: number): boolean { return pos >= this.first && pos < this.total; }

  row(pos: number): EventRow | null {
    if (!this.holds(pos)) return null;
    const i = pos % this.capacity;
    return {
      pos, seq: this.seq[i], t: this.t[i], kind: this.kinds.get(this.kind[i]), device: this.device[i],
      obj: this.obj[i], objKind: this.objKinds.get(this.objKind[i]), a: this.a[i], b: this.b[i], c: this.c[i],
      d: this.d[i], text: this.text[i] ?? '', ok: (this.flags[i] & 1) === 1,
    };
  }

  clear(): void { this.total = 0; this.dropped = 0; this.text.fill(undefined); }
}

export interface EventFilter { kind: string; obj: number | null; text: string }

/** whether `hay` contains `needle` (already lower case), ignoring ASCII case, without building a lowered copy */
export function containsIgnoringCase(hay: string, needle: string): boolean {
  const n = needle.length;
  if (n === 0) return true;
  const first = needle.charCodeAt(0);
  outer: for (let i = 0; i + n <= hay.length; i++) {
    for (let k = 0; k < n; k++) {
      let c = hay.charCodeAt(i + k);
      if (c >= 65 && c <= 90) c |= 32;
      else if (c > 127) c = hay[i + k]!.toLowerCase().charCodeAt(0);
      if (c !== (k === 0 ? first : needle.charCodeAt(k))) continue outer;
    }
    return true;
  }
  return false;
}

/**
 * An incrementally maintained list of the ring positions that pass a filter. `update()` scans only the
 * events appended since the last call (and drops positions that fell out of the ring), so keeping a filtered
 * view of a million-row log costs O(new events) per frame.
 */
export class FilteredView {
  private idx = new Float64Array(1024);
  private start = 0;   // index into idx of the first live entry
  private end = 0;     // one past the last entry
  private scanned = 0; // absolute position scanned up to
  private kindId = -2;
  constructor(private ring: EventRing, public filter: EventFilter = { kind: '', obj: null, text: '' }) {}

  get length(): number { return this.end - this.start; }
  at(i: number): number { return this.idx[this.start + i]; }

  setFilter(f: EventFilter): void { this.filter = f; this.reset(); }
  reset(): void { this.start = 0; this.end = 0; this.scanned = this.ring.first; this.kindId = -2; this.textHits.clear(); this.nameHits.clear(); }

  // text filter: whether each distinct text / kind+object-kind pair contains the needle, found once (texts repeat:
  // the ones from binary frames are interned), so filtering a million rows costs a lookup per row
  private readonly textHits = new Map<string, boolean>();
  private readonly nameHits = new Map<number, boolean>();

  private matches(pos: number): boolean {
    const r = this.ring; const i = pos % r.capacity; const f = this.filter;
    if (f.kind) {
      if (this.kindId === -2 || this.kindId === -1) this.kindId = r.kinds.lookup(f.kind);
      if (r.kind[i] !== this.kindId) return false;
    }
    if (f.obj !== null && r.obj[i] !== f.obj) return false;
    if (f.text) {
      const needle = f.text.toLowerCase();
      const names = r.kind[i]! * 65536 + r.objKind[i]!;
      let hit = this.nameHits.get(names);
      if (hit === undefined) {
        hit = `${r.kinds.get(r.kind[i]!)} ${r.objKinds.get(r.objKind[i]!)}`.toLowerCase().includes(needle);
        this.nameHits.set(names, hit);
      }
      if (hit) return true;
      const text = r.text[i];
      if (!text) return false;
      let t = this.textHits.get(text);
      if (t === undefined) {
        t = containsIgnoringCase(text, needle);
        if (this.textHits.size < 20_000) this.textHits.set(text, t);   // texts that repeat are met early
      }
      return t;
    }
    return true;
  }

  /** rows of the ring not scanned yet (a new filter over a full ring is scanned over several frames) */
  get pending(): number { return Math.max(0, this.ring.total - Math.max(this.scanned, this.ring.first)); }

  /** Scan what was appended (or is left to scan) until `deadline` (a time of the clock `now`, checked every 4096
   *  rows); returns true if the view changed. */
  update(deadline = Infinity, now: () => number = () => performance.now()): boolean {
    const r = this.ring;
    let changed = false;
    const first = r.first;
    while (this.start < this.end && this.idx[this.start] < first) { this.start++; changed = true; }
    if (this.scanned < first) this.scanned = first;
    for (let p = this.scanned, n = 1; p < r.total; p++, n++) {
      if ((n & 4095) === 0 && deadline !== Infinity && now() > deadline) { this.scanned = p; return changed; }
      if (!this.matches(p)) continue;
      if (this.end === this.idx.length) {
        const live = this.end - this.start;
        const next = new Float64Array(live * 2 > this.idx.length ? this.idx.length * 2 : this.idx.length);
        next.set(this.idx.subarray(this.start, this.end));
        this.idx = next; this.start = 0; this.end = live;
      }
      this.idx[this.end++] = p; changed = true;
    }
    this.scanned = r.total;
    return changed;
  }
}
