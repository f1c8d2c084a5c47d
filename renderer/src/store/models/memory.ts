// Memory writes: the hex view's highlight and heat strip.
import type { DeviceEvent } from '../../../../app/protocol/index.ts';

export interface WriteMark { seq: number; addr: number; length: number }
export class MemoryMarks {
  /** per buffer handle: recent writes (newest last) */
  readonly writes = new Map<number, WriteMark[]>();
  static readonly KINDS = ['MemWrite'];
  applyEvent(e: DeviceEvent): boolean {
    if (e.kind !== 'MemWrite') return false;
    // obj = buffer, a = virtual address, b = length
    let l = this.writes.get(e.obj);
    if (!l) { l = []; this.writes.set(e.obj, l); }
    l.push({ seq: e.seq, addr: e.a, length: e.b });
    if (l.length > 8192) l.splice(0, l.length - 4096);   // trim in chunks: O(1) amortized
    return true;
  }
  /** write counts per byte over [addr, addr+len) */
  heat(buffer: number, addr: number, len: number): Uint32Array {
    const h = new Uint32Array(len);
    for (const w of this.writes.get(buffer) ?? []) {
      const s = Math.max(addr, w.addr); const e = Math.min(addr + len, w.addr + w.length);
      for (let x = s; x < e; x++) h[x - addr]++;
    }
    return h;
  }
  /** seq of the last write per byte (0 = never) */
  lastWrite(buffer: number, addr: number, len: number): Float64Array {
    const out = new Float64Array(len);
    for (const w of this.writes.get(buffer) ?? []) {
      const s = Math.max(addr, w.addr); const e = Math.min(addr + len, w.addr + w.length);
      for (let x = s; x < e; x++) out[x - addr] = w.seq;
    }
    return out;
  }
}
