// Keys (MRs and MWs) as the device reports them: the key table the Memory panel and the WC explanations read.
import type { DeviceEvent, KeyStateName, ResultOf } from '../../../../app/protocol/index.ts';
import { Access, Change, KeyState, namesOf } from '../../../../app/protocol/index.ts';
import { isRec, type Rec } from '../spec.ts';

export interface KeySeg { addr: number; length: number }
export interface KeyEntry {
  handle: number; type: 'MR' | 'MW'; kind: string; device: number; pd: number;
  lkey: number; rkey: number; addr: number; length: number; access: number;
  /** the key's state (KeyState name), or 'destroyed' once the console saw the object go */
  state: KeyStateName | 'destroyed';
  boundQp: number; mr: number; sg: KeySeg[]; destroyed: boolean;
}
export { keyIndex, keyByte } from '../../format.ts';
import { keyIndex } from '../../format.ts';
/** an MR's or MW's description as the host gives it (MrOut / MwOut) */
export type KeyInfo = ResultOf<'mr.reg'> | ResultOf<'mw.alloc'>;
export const accessNames = (access: number) => namesOf(Access, access).map((n) => n.replace('IBV_ACCESS_', ''));

function accessOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (Array.isArray(v)) return v.reduce<number>((m, n) => m | (Access.values[n as keyof typeof Access.values] ?? 0), 0);
  return undefined;
}

export class KeyTable {
  readonly byHandle = new Map<number, KeyEntry>();

  private entry(handle: number, type: 'MR' | 'MW'): KeyEntry {
    let e = this.byHandle.get(handle);
    if (!e) {
      e = { handle, type, kind: type === 'MR' ? 'user' : 'type 1', device: 0, pd: 0, lkey: 0, rkey: 0, addr: 0, length: 0,
        access: 0, state: 'valid', boundQp: 0, mr: 0, sg: [], destroyed: false };
      this.byHandle.set(handle, e);
    }
    return e;
  }

  /** merge the description of an MR or MW (the protocol's MrOut / MwOut: replies of mr.reg, mr.alloc, mr.map_sg,
   *  mw.alloc; session.info's objects) */
  applyInfo(type: 'MR' | 'MW', info: KeyInfo, handleHint?: number): KeyEntry {
    const e = this.entry(info.handle ?? handleHint, type);
    e.pd = info.pd; e.access = info.access; e.state = info.state; e.length = Number(info.length);
    if ('lkey' in info) {
      // an MR: the range is its iova (what a remote peer addresses); the SG list of a fast-registration MR
      e.lkey = info.lkey; e.rkey = info.rkey; e.addr = Number(info.iova); e.kind = info.kind;
      e.sg = info.sg.map((s) => ({ addr: Number(s.addr), length: s.length }));
    } else {
      e.lkey = e.rkey = info.rkey; e.addr = Number(info.addr); e.kind = `type ${info.type}`; e.boundQp = info.qp; e.mr = info.mr;
    }
    return e;
  }

  /** the event kinds applyEvent looks at (the store routes only these here) */
  static readonly KINDS = ['ObjectCreated', 'ObjectModified', 'ObjectDestroyed'];
  /** ObjectCreated / ObjectModified / ObjectDestroyed events for mr and mw objects */
  applyEvent(e: DeviceEvent): boolean {
    if (e.objKind !== 'mr' && e.objKind !== 'mw') return false;
    const type = e.objKind === 'mr' ? 'MR' : 'MW';
    if (e.kind === 'ObjectDestroyed') {
      const k = this.byHandle.get(e.obj);
      if (k) { k.destroyed = true; k.state = 'destroyed'; }
      return !!k;
    }
    if (e.kind !== 'ObjectCreated' && e.kind !== 'ObjectModified') return false;
    const k = this.entry(e.obj, type);
    if (e.device) k.device = e.device;
    // Event numbers (native/EVENTS.md); what changed is the event's typed `change`, the key's state its `keyState`
    if (e.kind === 'ObjectCreated' && type === 'MR') {
      // user MR: a = lkey, b = rkey, c = addr, d = length; fast-reg MRs are created free, no range yet (c = max_num_sg)
      if (e.a) k.lkey = e.a; if (e.b) k.rkey = e.b;
      if (e.keyState !== KeyState.values.free) { if (e.c) k.addr = e.c; if (e.d) k.length = e.d; }
    }
    if (e.kind === 'ObjectCreated' && type === 'MW') { k.rkey = k.lkey = e.a; k.kind = `type ${e.b}`; }
    if (e.kind === 'ObjectModified') {
      switch (e.change) {
        case Change.values.BIND: case Change.values.UNBIND: k.rkey = k.lkey = e.a; k.addr = e.b; k.length = e.c; k.access = e.d; break;   // a = rkey, b = addr, c = length, d = access
        case Change.values.REREG: k.lkey = e.a; k.rkey = e.b; break;                                          // a = lkey, b = rkey
        case Change.values.REG_MR: k.lkey = k.rkey = e.a; k.addr = e.b; k.length = e.c; k.access = e.d; break;  // a = key, b = iova, c = length, d = access
        case Change.values.MAP_MR_SG: k.addr = e.c; k.length = e.d; break;                                   // c = iova, d = length
      }
    }
    // any structured detail the host decoded for us wins
    const extra: Rec = { ...e };   // fields beyond the event schema's
    const info = extra.info ?? extra.obj_info;
    if (isRec(info)) this.applyInfo(type, info as KeyInfo, e.obj);
    if (e.keyState !== undefined) k.state = KeyState.nameOf(e.keyState) ?? k.state;
    return true;
  }

  rows(includeDestroyed = true): KeyEntry[] {
    const out = [...this.byHandle.values()].filter((k) => includeDestroyed || !k.destroyed);
    return out.sort((x, y) => keyIndex(x.rkey || x.lkey) - keyIndex(y.rkey || y.lkey) || x.handle - y.handle);
  }
}
