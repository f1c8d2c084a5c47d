// The lab's pcap as Wireshark reads it: `verbslab lab run nvmf --pcap` and tshark's own dissectors (infiniband CM,
// nvme-rdma, nvme) with the repo's independent ICRC check (native/tests/tshark/icrc_check.lua). The CM exchange on
// QP1 is what lets tshark know the RC QPs carry NVMe/RDMA, as in the kernel capture of fixtures/.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLabs } from '../../app/scenario/lab-cli.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lua = path.join(root, 'native/tests/tshark/icrc_check.lua');
const hasTshark = (() => { try { execFileSync('tshark', ['-v'], { stdio: 'ignore' }); return true; } catch { return false; } })();
let pcap = '';
const fields = (filter: string, ...f: string[]): string[][] => execFileSync('tshark', ['-r', pcap, '-X', `lua_script:${lua}`, '-Y', filter, '-T', 'fields', '-E', 'separator=/t', ...f.flatMap((x) => ['-e', x])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 })
  .split('\n').filter(Boolean).map((l) => l.split('\t'));
const count = (rows: string[][], i: number, v: string) => rows.filter((r) => r[i] === v).length;

describe('lab 4 pcap in tshark', () => {
  it('tshark is installed (the check cannot be skipped silently)', () => { expect(hasTshark, 'tshark not found on PATH: apt-get install -y tshark').toBe(true); });
  beforeAll(async () => {
    pcap = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vl-nvmf-')), 'nvmf.pcap');
    const { runs } = await runLabs(['nvmf'], { pcap });
    expect(runs[0]!.steps.every((s) => s.passed)).toBe(true);
  }, 120_000);

  it('every frame has a good ICRC (independent check)', () => {
    const all = fields('udp.port == 4791', 'icrc_check.status');
    expect(all.length).toBeGreaterThan(2000);
    expect(all.filter((r) => r[0] !== 'good')).toEqual([]);
  });

  it('the RDMA CM on QP1: REQ x6 (one rejected), REP x5, REJ x1, RTU x5', () => {
    const mads = fields('infiniband.mad', 'infiniband.mad.attributeid', 'infiniband.bth.destqp');
    expect(['0x0010', '0x0013', '0x0012', '0x0014'].map((a) => count(mads, 0, a))).toEqual([6, 5, 1, 5]);
    expect(mads.every((r) => Number(r[1]) === 1)).toBe(true);
  });

  it('NVMe/RDMA: the Connects per queue, the admin and I/O opcodes, the CNTLID and each error status', () => {
    const con = fields('nvme.fabrics.cmd.connect.qid', 'nvme.fabrics.cmd.connect.qid', 'nvme.fabrics.cmd.connect.sqsize', 'nvme.fabrics.cmd.connect.kato');
    expect(con).toEqual([['0', '31', '5000'], ['1', '31', '0'], ['2', '31', '0'], ['4', '31', '0']]);   // queue 3: offload enabled before its Connect (never sent)
    const cntl = fields('nvme.fabrics.cqe.connect.cntrlid', 'nvme.fabrics.cqe.connect.cntrlid');
    expect(cntl.filter((r) => r[0] === '0x0001').length).toBe(3);
    const sqe = fields('nvme.cmd.opc', 'nvme.cmd.opc', 'nvme-rdma.cmd.qid');
    expect(count(sqe.filter((r) => r[1] === '0x0000'), 0, '0x06')).toBe(2);      // Identify Controller, Namespace
    expect(count(sqe.filter((r) => r[1] === '0x0000'), 0, '0x18')).toBe(3);      // Keep Alive (one refused, one with queue 4 offloaded)
    expect(count(sqe.filter((r) => r[1] === '0x0001'), 0, '0x02')).toBeGreaterThanOrEqual(256 + 2);   // Read
    expect(count(sqe.filter((r) => r[1] === '0x0001'), 0, '0x01')).toBeGreaterThanOrEqual(64 + 2);    // Write
    // queue 4, served by the device's offload engine: the same capsules on the wire (64 WRITEs, 256 READs, one FLUSH,
    // the WRITE software served after the PCI error and the one to the new SSD,
    // the unmapped-NSID READ and the one the backend lost); queue 3's WRITE before any Connect
    expect([0x01, 0x02, 0x00].map((o) => count(sqe.filter((r) => r[1] === '0x0004'), 0, `0x0${o}`))).toEqual([64 + 2, 256 + 2, 1]);
    expect(count(sqe.filter((r) => r[1] === '0x0003'), 0, '0x01')).toBe(1);
    const st = new Set(fields('nvme.cqe.status', 'nvme.cqe.status').map((r) => r[0]));
    // status words with DNR: Command Sequence Error, Invalid Opcode, SGL Data Block Length Invalid, Invalid SGL
    // Offset, Invalid Namespace, LBA Out of Range, Connect Invalid Parameters (SCT 1)
    for (const s of ['0x8018', '0x8002', '0x801e', '0x802c', '0x8016', '0x8100', '0x8304']) expect(st, s).toContain(s);
  });
});
