// The memory & keys slice: buffers and their hex view (memory.read of a 4 KiB window), memory.write, and the key
// objects: MRs (mr.reg / dereg, fast-registration mr.alloc + mr.map_sg) and MWs (mw.alloc / bind / dealloc). The
// key table itself is a model fed by events (models.ts KeyTable); replies merge their MrInfo/MwInfo into it.
import { touched, type ArgsOf, type Slice } from '../slice.ts';
import { bytesFrom, type BufferView } from '../views.ts';

export interface MemorySlice {
  buffers: BufferView[]; selectedBuffer: number | null;
  /** objects alive in the session that this page has no details for (created before it connected) */
  unknownObjects: { handle: number; kind: string; device: number }[];
  hex: Record<number, { addr: number; bytes: Uint8Array; seqAt: number }>;
  allocBuffer(length: number): Promise<void>; freeBuffer(h: number): Promise<void>; selectBuffer(h: number | null): void;
  writeMemory(form: string, addr: number, hexData: string): Promise<boolean>; readBuffer(h: number): Promise<void>;
  /** which 4 KiB window of each buffer the hex view shows (offset from the buffer start) */
  hexOffset: Record<number, number>; setHexOffset(h: number, offset: number): void;
  regMr(args: { pd: number; addr: number; length: number; access: string[] }): Promise<boolean>;
  deregMr(h: number): Promise<void>;
  allocMw(pd: number, type: 'IBV_MW_TYPE_1' | 'IBV_MW_TYPE_2'): Promise<boolean>;
  deallocMw(h: number): Promise<boolean>;
  allocMr(pd: number, maxNumSg: number, indirect: boolean): Promise<boolean>;
  mapMrSg(mr: number, sgList: { addr: number; length: number; lkey: number }[], pageSize: number): Promise<boolean>;
  bindMw(args: { qp: number; mw: number; mr: number; addr: number; length: number; access: string[] }): Promise<boolean>;
}

export const createMemorySlice: Slice<MemorySlice> = (set, get, ctx) => {
  const { model, reading } = ctx;
  return {
    buffers: [], selectedBuffer: null, hex: {}, unknownObjects: [], hexOffset: {},
    setHexOffset(h, offset) { set((s) => ({ hexOffset: { ...s.hexOffset, [h]: offset } })); void get().readBuffer(h); },
    async allocBuffer(length) {
      const r = await get().run('buffer.alloc', 'buffer.alloc', { length });
      if (!r) return;
      const h = r.buffer; const addr = Number(r.addr);
      {
        const b: BufferView = { handle: h, addr, length: Number(r.length), destroyed: false };
        set((s) => ({ buffers: s.buffers.some((x) => x.handle === h) ? s.buffers : [...s.buffers, b], selectedBuffer: h }));
        void get().readBuffer(h);
      }
    },
    async freeBuffer(h) {
      if (await get().exec(`buffer.free:${h}`, { cmd: 'buffer.free', args: { buffer: h } }))
        set((s) => ({ buffers: s.buffers.map((b) => (b.handle === h ? { ...b, destroyed: true } : b)) }));
    },
    selectBuffer(h) { set({ selectedBuffer: h }); if (h) void get().readBuffer(h); },
    async writeMemory(form, addr, hexData) {
      return !!(await get().exec(form, { cmd: 'memory.write', args: { addr, data: hexData } }));
    },
    async readBuffer(h) {
      const b = get().buffers.find((x) => x.handle === h);
      if (!b || b.destroyed || reading.has(h)) return;
      reading.add(h);
      const seqAt = model.ring.total;
      try {
        const off = Math.max(0, Math.min(get().hexOffset[h] ?? 0, Math.max(0, b.length - 1)));
        const addr = b.addr + off;
        const r = await get().run(`memory.read:${h}`, 'memory.read', { addr, length: Math.min(b.length - off, 4096) });
        if (r) set((s) => ({ hex: { ...s.hex, [h]: { addr, bytes: bytesFrom(r.hex), seqAt } } }));
      } finally { reading.delete(h); }
    },
    async regMr(args) {
      const r = await get().run('mr.reg', 'mr.reg', args as ArgsOf<'mr.reg'>);   // access names: checked by the schema in exec
      if (!r) return false;
      model.keys.applyInfo('MR', r, r.mr);
      touched(ctx, 'keys');
      return true;
    },
    async deregMr(h) {
      if (await get().exec(`mr.dereg:${h}`, { cmd: 'mr.dereg', args: { mr: h } })) {
        const k = model.keys.byHandle.get(h); if (k) { k.destroyed = true; k.state = 'destroyed'; }
        touched(ctx, 'keys');
      }
    },
    async allocMw(pd, type) {
      const r = await get().run('mw.alloc', 'mw.alloc', { pd, type });
      if (!r) return false;
      model.keys.applyInfo('MW', r, r.mw);
      touched(ctx, 'keys');
      return true;
    },
    async deallocMw(h) {
      const r = await get().exec(`mw.dealloc:${h}`, { cmd: 'mw.dealloc', args: { mw: h } });
      if (r) { const k = model.keys.byHandle.get(h); if (k) { k.destroyed = true; k.state = 'destroyed'; } touched(ctx, 'keys'); }
      return !!r;
    },
    async allocMr(pd, maxNumSg, indirect) {
      const r = await get().run('mr.alloc', 'mr.alloc', { pd, maxNumSg, indirect });
      if (!r) return false;
      model.keys.applyInfo('MR', r, r.mr);
      touched(ctx, 'keys');
      return true;
    },
    async mapMrSg(mr, sgList, pageSize) {
      const r = await get().run('mr.map_sg', 'mr.map_sg', { mr, sgList, pageSize });
      if (!r) return false;
      if (r.mrInfo) model.keys.applyInfo('MR', r.mrInfo, mr);
      touched(ctx, 'keys');
      return true;
    },
    async bindMw(args) {
      // the bind is a send-queue operation: its completion and the new rkey arrive as events
      return !!(await get().exec('mw.bind', { cmd: 'mw.bind', args }));
    },
  };
};
