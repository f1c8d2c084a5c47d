// The wire slice: the selected packet and "Save pcap" (pcap.get: the session's capture, or one device's real
// network traffic). The packets themselves are a model fed by Packet* events (models.ts WireLog).
import type { Slice } from '../slice.ts';

export interface WireSlice {
  selectedPacket: number | null; selectPacket(id: number | null): void;
  /** the session's pcap, or (device given) the capture of that device's real network traffic */
  savePcap(device?: number): Promise<Uint8Array | null>;
}

export const createWireSlice: Slice<WireSlice> = (set, get) => ({
  selectedPacket: null,
  selectPacket: (id) => set({ selectedPacket: id }),
  async savePcap(device) {
    const r = await get().run('pcap.get', 'pcap.get', device === undefined ? {} : { device });
    if (!r) return null;
    const bin = atob(r.base64); const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  },
});
