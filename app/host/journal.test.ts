// The session journal: one line per command, appended; replay reads them back; torn lines are skipped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import zlib from 'node:zlib';
import { BLOB_DIR, Journal, lockSessionDir } from './journal.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vl-journal-'));

describe('Journal', () => {
  it('appends one JSON line per command and reads them back in order', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'device.create', args: { profile: 'rxe' } });
    j.append({ cmd: 'pd.alloc', args: { device: 1 } });
    const lines = fs.readFileSync(j.file, 'utf8').trim().split('\n');
    expect(lines.length).toBe(2);
    const crc = zlib.crc32(JSON.stringify({ cmd: 'pd.alloc', args: { device: 1 } })).toString(16).padStart(8, '0');
    expect(JSON.parse(lines[1]!)).toEqual({ n: 2, crc, command: { cmd: 'pd.alloc', args: { device: 1 } } });
    const again = new Journal(dir).read();
    expect(again.entries.map((e) => e.command)).toEqual([
      { cmd: 'device.create', args: { profile: 'rxe' } }, { cmd: 'pd.alloc', args: { device: 1 } },
    ]);
    expect(again.skipped).toEqual([]);
  });

  it('cuts a torn last line (host killed mid-write) off the file and reports it', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'buffer.alloc', args: { length: 4096 } });
    const whole = fs.statSync(j.file).size;
    fs.appendFileSync(j.file, '{"n":2,"command":{"cmd":"pd.al');
    const j2 = new Journal(dir);
    const r = j2.read();
    expect(r.entries.map((e) => e.command.cmd)).toEqual(['buffer.alloc']);
    expect(r.skipped.map((s) => s.line)).toEqual([2]);
    expect(r.skipped[0]!.reason).toMatch(/torn last line/);
    expect(fs.statSync(j.file).size).toBe(whole);
    j2.append({ cmd: 'pd.alloc', args: { device: 1 } });
    expect(new Journal(dir).read().entries.map((e) => e.command.cmd)).toEqual(['buffer.alloc', 'pd.alloc']);
  });

  it('stops at an invalid line: the entries before it replay, it and the ones after are set aside, never replayed shifted', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'buffer.alloc', args: { length: 4096 } });
    fs.appendFileSync(j.file, JSON.stringify({ n: 2, command: { cmd: 'pd.alloc', args: { device: 'x' } } }) + '\n');
    j.append({ cmd: 'pd.alloc', args: { device: 1 } });
    j.append({ cmd: 'pd.alloc', args: { device: 2 } });
    const r = new Journal(dir).read();
    expect(r.entries.map((e) => e.command.cmd)).toEqual(['buffer.alloc']);
    expect(r.skipped.map((s) => s.line)).toEqual([2]);
    expect(r.skipped[0]!.reason).toMatch(/invalid command.*replay stopped here.*2 line\(s\) after it.*journal\.rejected-/);
    const rejected = fs.readdirSync(dir).filter((f) => f.startsWith('journal.rejected-'));
    expect(rejected.length).toBe(1);
    expect(fs.readFileSync(path.join(dir, rejected[0]!), 'utf8').trim().split('\n').length).toBe(3);
    expect(fs.readFileSync(j.file, 'utf8').trim().split('\n').length).toBe(1);   // the journal is its good prefix
  });

  it('finds a flipped byte by the line\'s CRC (the command would still parse) and stops there', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'device.create', args: { profile: 'rxe' } });
    j.append({ cmd: 'pd.alloc', args: { device: 1 } });
    j.append({ cmd: 'pd.alloc', args: { device: 1 } });
    const text = fs.readFileSync(j.file, 'utf8').replace('"device":1}}}\n{"n":3', '"device":7}}}\n{"n":3');
    fs.writeFileSync(j.file, text);
    const r = new Journal(dir).read({ repair: false });
    expect(r.entries.length).toBe(1);
    expect(r.skipped[0]!.line).toBe(2);
    expect(r.skipped[0]!.reason).toMatch(/CRC mismatch/);
    expect(fs.readFileSync(j.file, 'utf8')).toBe(text);   // repair: false (journal.get) changes nothing
  });

  it('keeps bulk data out of the line: a content-addressed blob, checked on the way back', () => {
    const dir = tmp();
    const j = new Journal(dir);
    const data = 'ab'.repeat(512 * 1024);   // 1 MiB of memory.write as hex
    j.append({ cmd: 'memory.write', args: { addr: 4096, data } });
    j.append({ cmd: 'memory.write', args: { addr: 8192, data } });   // the same bytes: the same blob
    j.append({ cmd: 'memory.write', args: { addr: 4096, data: '00ff' } });
    expect(fs.statSync(j.file).size).toBeLessThan(1024);
    const blobs = fs.readdirSync(path.join(dir, BLOB_DIR));
    expect(blobs.length).toBe(1);
    expect(fs.statSync(path.join(dir, BLOB_DIR, blobs[0]!)).mode & 0o777).toBe(0o600);
    const r = new Journal(dir).read();
    expect(r.entries.map((e) => (e.command.args as { data?: string }).data?.length)).toEqual([data.length, data.length, 4]);
    expect((r.entries[1]!.command.args as { data: string }).data).toBe(data);
    // an altered blob is that line's problem: the replay stops there with the reason
    fs.writeFileSync(path.join(dir, BLOB_DIR, blobs[0]!), 'cd'.repeat(512 * 1024));
    const bad = new Journal(dir).read({ repair: false });
    expect(bad.entries.length).toBe(0);
    expect(bad.skipped[0]!.reason).toMatch(/blob .* was altered/);
  });

  it('reads a journal far larger than one string may be, a line at a time (no readFileSync of the file)', () => {
    const dir = tmp();
    const j = new Journal(dir);
    const n = 20_000;
    for (let i = 0; i < n; i++) j.append({ cmd: 'engine.step', args: { count: 1 + (i % 7) } });
    let seen = 0, sum = 0;
    const r = new Journal(dir).scan((e) => { seen++; sum += (e.command.args as { count: number }).count; });
    expect(r).toEqual({ entries: n, skipped: [] });
    expect(seen).toBe(n);
    let want = 0;
    for (let i = 0; i < n; i++) want += 1 + (i % 7);
    expect(sum).toBe(want);
  });

  it('truncate starts a new recording', () => {
    const j = new Journal(tmp());
    j.append({ cmd: 'buffer.alloc', args: { length: 64 } });
    j.truncate();
    j.append({ cmd: 'session.reset', args: { seed: 5 } });
    expect(j.read().entries.map((e) => e.command.cmd)).toEqual(['session.reset']);
    expect(j.count).toBe(1);
  });
});

describe('lockSessionDir', () => {
  it('admits one live host per session directory and takes over a stale lock', () => {
    const dir = tmp();
    expect(lockSessionDir(dir, process.pid)).toBeNull();
    // another live process (our parent) holding it: refused, naming the pid
    fs.writeFileSync(path.join(dir, 'host.pid'), String(process.ppid));
    expect(lockSessionDir(dir, process.pid)).toContain(`pid ${process.ppid}`);
    // a process that has exited: stale, taken over
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    fs.writeFileSync(path.join(dir, 'host.pid'), gone);
    expect(lockSessionDir(dir, process.pid)).toBeNull();
    expect(fs.readFileSync(path.join(dir, 'host.pid'), 'utf8')).toBe(String(process.pid));
  });
});
