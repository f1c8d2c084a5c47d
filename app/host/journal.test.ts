// The session journal: one line per command, appended; replay reads them back; torn lines are skipped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { Journal, lockSessionDir } from './journal.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vl-journal-'));

describe('Journal', () => {
  it('appends one JSON line per command and reads them back in order', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'device.create', args: { profile: 'rxe' } });
    j.append({ cmd: 'pd.alloc', args: { device: 1 } });
    const lines = fs.readFileSync(j.file, 'utf8').trim().split('\n');
    expect(lines.length).toBe(2);
    expect(JSON.parse(lines[1]!)).toEqual({ n: 2, command: { cmd: 'pd.alloc', args: { device: 1 } } });
    const again = new Journal(dir).read();
    expect(again.entries.map((e) => e.command)).toEqual([
      { cmd: 'device.create', args: { profile: 'rxe' } }, { cmd: 'pd.alloc', args: { device: 1 } },
    ]);
    expect(again.skipped).toEqual([]);
  });

  it('skips a torn last line (host killed mid-write) and an invalid command, and reports them', () => {
    const dir = tmp();
    const j = new Journal(dir);
    j.append({ cmd: 'buffer.alloc', args: { length: 4096 } });
    fs.appendFileSync(j.file, JSON.stringify({ n: 2, command: { cmd: 'pd.alloc', args: { device: 'x' } } }) + '\n');
    fs.appendFileSync(j.file, '{"n":3,"command":{"cmd":"pd.al');
    const r = new Journal(dir).read();
    expect(r.entries.map((e) => e.command.cmd)).toEqual(['buffer.alloc']);
    expect(r.skipped.map((s) => s.line)).toEqual([2, 3]);
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
