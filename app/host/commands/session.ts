// Handlers of the session commands (app/protocol/commands/session.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { sessionCommands } from '../../protocol/commands/session.ts';
import { errnoName, fail, ok, st, u64n, type Handlers } from './handler.ts';
import { mrOut, mwOut } from './out.ts';

export const sessionHandlers: Handlers<typeof sessionCommands> = {
  'session.info': (x) => ok({
    seed: x.seed, epoch: x.epoch, nowNs: x.s.now_ns(), napiVersion: x.addon.napiVersion,
    profiles: x.addon.Session.profiles().map((p) => p.name),
    objects: x.liveObjects().map((o) => {
      const mr = o.kind === 'mr' ? x.s.mr_info(o.handle) : null;
      const mw = o.kind === 'mw' ? x.s.mw_info(o.handle) : null;
      return mr ? { ...o, info: mrOut(mr) } : mw ? { ...o, info: mwOut(mw) } : o;
    }),
    autorun: x.autorun, realTime: x.netDevices.size > 0, network: [...x.netDevices],
    traffic: x.traffic ? x.trafficView() : null,
    eventSeq: u64n(x.s.last_seq()),   // events the device produced so far (seq of the last one)
    ...(x.realSession ? { backend: x.realSession.backend } : {}),
  }),
  'session.reset': (x, a) => {
    if (a.backend !== 'ibverbs') {
      if (a.device !== undefined) return fail('EINVAL', 'args.device: names a real device; give backend: "ibverbs" with it', 'args.device');
      return ok(x.resetSession(a.seed));
    }
    // the current session stays as it is when the device cannot be opened (dlerror text, the devices listed, ...)
    const r = x.openRealSession(a.device ?? '', a.seed);
    if (!r.ok) return fail(errnoName(r.err), `args.${/dlopen|not a libibverbs/.test(r.msg) ? 'backend' : 'device'}: ${r.msg}`, /dlopen|not a libibverbs/.test(r.msg) ? 'args.backend' : 'args.device');
    return ok({ ...r.result, backend: x.realSession!.backend });
  },
  'pcap.get': (x, a) => {
    if (a.device !== undefined) {
      // the capture of one device's network traffic, with the real IP/UDP headers (UdpTransport::write_pcap)
      if (!x.netDevices.has(a.device)) return fail('ENOENT', `args.device: device ${a.device} is not on the network (its traffic is in the session pcap: pcap.get without device)`, 'args.device');
      return withPcap((file) => x.s.write_net_pcap(a.device!, file),
        (bytes) => ({ format: 'pcap' as const, linktype: 'LINKTYPE_ETHERNET' as const, device: a.device!, network: true, length: bytes.length, base64: bytes.toString('base64') }));
    }
    return withPcap((file) => x.s.write_pcap(file),
      (bytes) => ({ format: 'pcap' as const, linktype: 'LINKTYPE_ETHERNET' as const, length: bytes.length, base64: bytes.toString('base64') }));
  },
};

/** Write a capture to a temporary file and read it back. */
function withPcap<T>(write: (file: string) => { err: number; msg: string }, out: (bytes: Buffer) => T) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verbslab-pcap-'));
  try {
    const file = path.join(dir, 'capture.pcap');
    const s = write(file);
    if (s.err) return st(s, out(Buffer.alloc(0)));
    return ok(out(fs.readFileSync(file)));
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
}
