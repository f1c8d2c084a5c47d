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

describe.skipIf(!hasTshark)('lab 4 pcap in tshark', () => {
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

  it('the RDMA CM on QP1: REQ x4 (one rejected), REP x3, REJ x1, RTU x3', () => {
    const mads = fields('infiniband.mad', 'infiniband.mad.attributeid', 'infiniband.bth.destqp');
    expect(['0x0010', '0x0013', '0x0012', '0x0014'].map((a) => count(mads, 0, a))).toEqual([4, 3, 1, 3]);
    expect(mads.every((r) => Number(r[1]) === 1)).toBe(true);
  });

  it('NVMe/RDMA: the Connects per queue, the admin and I/O opcodes, the CNTLID and each error status', () => {
    const con = fields('nvme.fabrics.cmd.connect.qid', 'nvme.fabrics.cmd.connect.qid', 'nvme.fabrics.cmd.connect.sqsize', 'nvme.fabrics.cmd.connect.kato');
    expect(con).toEqual([['0', '31', '5000'], ['1', '31', '0'], ['2', '31', '0']]);
    const cntl = fields('nvme.fabrics.cqe.connect.cntrlid', 'nvme.fabrics.cqe.connect.cntrlid');
    expect(cntl.filter((r) => r[0] === '0x0001').length).toBe(2);
    const sqe = fields('nvme.cmd.opc', 'nvme.cmd.opc', 'nvme-rdma.cmd.qid');
    expect(count(sqe.filter((r) => r[1] === '0x0000'), 0, '0x06')).toBe(2);      // Identify Controller, Namespace
    expect(count(sqe.filter((r) => r[1] === '0x0000'), 0, '0x18')).toBe(2);      // Keep Alive (one refused)
    expect(count(sqe.filter((r) => r[1] === '0x0001'), 0, '0x02')).toBeGreaterThanOrEqual(256 + 2);   // Read
    expect(count(sqe.filter((r) => r[1] === '0x0001'), 0, '0x01')).toBeGreaterThanOrEqual(64 + 2);    // Write
    const st = new Set(fields('nvme.cqe.status', 'nvme.cqe.status').map((r) => r[0]));
    // status words with DNR: Command Sequence Error, Invalid Opcode, SGL Data Block Length Invalid, Invalid SGL
    // Offset, Invalid Namespace, LBA Out of Range, Connect Invalid Parameters (SCT 1)
    for (const s of ['0x8018', '0x8002', '0x801e', '0x802c', '0x8016', '0x8100', '0x8304']) expect(st, s).toContain(s);
  });
});
