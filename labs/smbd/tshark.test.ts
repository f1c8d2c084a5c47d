// The lab's pcap, read by an independent implementation: tshark's own smb_direct dissector (its heuristic on
// InfiniBand payloads, enabled by default) decodes the negotiate request and response and the data messages with
// the fields the lab put there, the SMB2 READ response after them is SMB2, every RoCEv2 ICRC is good
// (native/tests/tshark/icrc_check.lua), and the console's decoder (labs/smbd/decoder.ts) reads
// the same frames the same way. Needs tshark (a Debian test dependency npm test installs): fails without it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLabs } from '../../app/scenario/lab-cli.ts';
import { decodePayload } from '../../app/protocol/decoders.ts';

const tshark = spawnSync('tshark', ['-v'], { encoding: 'utf8' }).status === 0;
const LUA = path.resolve('native/tests/tshark/icrc_check.lua');

/** the frames of a pcap (LINKTYPE_ETHERNET, no options) */
function frames(file: string): Uint8Array[] {
  const b = fs.readFileSync(file);
  const out: Uint8Array[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const len = b.readUInt32LE(at + 8);
    out.push(new Uint8Array(b.subarray(at + 16, at + 16 + len)));
    at += 16 + len;
  }
  return out;
}

describe('lab smbd pcap in tshark', () => {
  it('tshark is installed (the check cannot be skipped silently)', () => { expect(tshark, 'tshark not found on PATH: apt-get install -y tshark').toBe(true); });
  it('smb_direct fields as the lab sent them; ICRC good; our decoder agrees', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vl-smbd-pcap-'));
    try {
      const file = path.join(dir, 'smbd.pcap');
      const { runs } = await runLabs(['smbd'], { pcap: file });
      expect(runs[0]!.passed).toBe(true);
      const t = spawnSync('tshark', ['-X', `lua_script:${LUA}`, '-r', file, '-Y', 'smb_direct', '-T', 'fields', '-E', 'separator=;',
        '-e', 'frame.number', '-e', 'smb_direct.credits.requested', '-e', 'smb_direct.credits.granted', '-e', 'smb_direct.preferred_send_size',
        '-e', 'smb_direct.max_fragmented_size', '-e', 'smb_direct.remaining_length', '-e', 'smb_direct.data_length',
        '-e', 'smb_direct.flags.response_requested', '-e', 'smb_direct.negotiate_request', '-e', 'smb_direct.negotiate_response', '-e', 'icrc_check.status'], { encoding: 'utf8' });
      expect(t.status).toBe(0);
      const rows = t.stdout.trim().split('\n').map((l) => l.split(';'));
      // negotiate request, response (4.1 values), two fragments (remaining 1 then 0), the keepalive, the READ response
      expect(rows.map((r) => r.slice(1, 8))).toEqual([
        ['10', '', '1024', '131072', '', '', ''],
        ['10', '10', '1024', '131072', '', '', ''],
        ['255', '0', '', '', '1', '1340', '0'],
        ['255', '0', '', '', '0', '1', '0'],
        ['255', '0', '', '', '0', '0', '1'],
        ['255', '1', '', '', '0', '80', '0'],
      ]);
      expect(rows.every((r) => r[10] === 'good')).toBe(true);
      const icrc = spawnSync('tshark', ['-X', `lua_script:${LUA}`, '-r', file, '-T', 'fields', '-e', 'icrc_check.status'], { encoding: 'utf8' });
      const all = icrc.stdout.trim().split('\n');
      expect(all.length).toBeGreaterThan(10);
      expect(all.every((s) => s === 'good')).toBe(true);
      const smb2 = spawnSync('tshark', ['-r', file, '-Y', 'smb2', '-T', 'fields', '-e', 'smb2.cmd', '-e', 'smb2.read_remaining', '-e', '_ws.malformed'], { encoding: 'utf8' });
      expect(smb2.stdout.replace(/\n$/, '')).toBe('8\t4096\t');

      // our decoder on the same frames: Ethernet 14 + IPv4 20 + UDP 8, BTH 12 (pad count in byte 1), ICRC 4
      const fr = frames(file);
      const ours = rows.map((r) => {
        const f = fr[Number(r[0]) - 1]!;
        const pad = (f[42 + 1]! >> 4) & 3;
        const ieth = f[42] === 0x16 || f[42] === 0x17 ? 4 : 0;      // SEND with Invalidate: the IETH follows the BTH
        const d = decodePayload({ opcode: f[42]!, destQp: 0, payload: f.subarray(54 + ieth, f.length - 4 - pad) });
        const m = (d?.fields['smb-direct'] ?? {}) as { creditsRequested?: number; creditsGranted?: number };
        return [d?.protocol, String(m.creditsRequested), m.creditsGranted === undefined ? '' : String(m.creditsGranted)];
      });
      expect(JSON.stringify(ours)).toBe(JSON.stringify(rows.map((r) => ['smb-direct', r[1], r[2]])));
    } finally { fs.rmSync(dir, { recursive: true, force: true }); }
  }, 120_000);
});
