// The wire slice: the selected packet and "Save pcap" (pcap.get: the session's capture, or one device's real
// network traffic). The packets themselves are a model fed by Packet* events (models.ts WireLog).
import type { Slice } from '../slice.ts';
import { str } from '../spec.ts';
import { bytesFrom } from '../views.ts';

export interface WireSlice {
  selectedPacket: number | null; selectPacket(id: number | null): void;
  /** the session's pcap, or (device given) the capture of that device's real network traffic */
  savePcap(device?: number): Promise<Uint8Array | null>;
}

export const createWireSlice: Slice<WireSlice> = (set, get) => ({
  selectedPacket: null,
  selectPacket: (id) => set({ selectedPacket: id }),
  async savePcap(device) {
    const r = await get().exec('pcap.get', { cmd: 'pcap.get', args: device === undefined ? {} : { device } });
    if (!r) return null;
    const res = r.result;
    const b64 = str(res, 'base64');
    if (b64 !== undefined) {
      const bin = atob(b64); const out = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    }
    return bytesFrom(res);
  },
});
