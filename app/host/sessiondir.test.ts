// The private session directory (sessiondir.ts): 0700, files 0600, no symlink followed, a directory of another user
// or writable by others refused with a sentence that says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal, lockSessionDir } from './journal.ts';
import { openPrivate, privateDir, writePrivate } from './sessiondir.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vl-sessiondir-'));
const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('private session directory', () => {
  it('is created 0700 and its journal, lock and blobs 0600', () => {
    const dir = path.join(tmp(), 'a', '.verbslab');
    expect(lockSessionDir(dir)).toBeNull();
    const j = new Journal(dir);
    j.append({ cmd: 'memory.write', args: { addr: 4096, data: 'ab'.repeat(40_000) } });
    expect(mode(dir)).toBe(0o700);
    expect(mode(j.file)).toBe(0o600);
    expect(mode(path.join(dir, 'host.pid'))).toBe(0o600);
    const blobs = path.join(dir, 'blobs');
    expect(mode(blobs)).toBe(0o700);
    for (const b of fs.readdirSync(blobs)) expect(mode(path.join(blobs, b))).toBe(0o600);
  });

  it('tightens an older 0755 directory and 0644 journal of ours', () => {
    const dir = tmp();
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'journal.jsonl'), '', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'journal.jsonl'), 0o644);
    const j = new Journal(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(j.file)).toBe(0o600);
  });

  it('refuses a directory others may write into, naming the mode and the fix', () => {
    const dir = tmp();
    fs.chmodSync(dir, 0o777);
    expect(privateDir(dir)).toMatch(/writable by its group \(mode 777\).*chmod 700/);
    fs.chmodSync(dir, 0o703);
    expect(privateDir(dir)).toMatch(/writable by others/);
    expect(lockSessionDir(dir)).toMatch(/writable by others/);
    expect(() => new Journal(dir)).toThrow(/writable by others/);
    expect(fs.existsSync(path.join(dir, 'journal.jsonl'))).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a directory owned by another user (as root: chown to nobody)', () => {
    const dir = tmp();
    fs.chownSync(dir, 65534, 65534);
    expect(privateDir(dir)).toMatch(/belongs to uid 65534, not to you \(uid 0\)/);
  });

  it('never writes through a planted symlink: the token file replaces it, the journal refuses it', () => {
    const dir = tmp();
    const victim = path.join(tmp(), 'victim');
    fs.writeFileSync(victim, 'secret\n', { mode: 0o600 });
    fs.symlinkSync(victim, path.join(dir, 'console.token'));
    writePrivate(path.join(dir, 'console.token'), 'token\n');
    expect(fs.readFileSync(victim, 'utf8')).toBe('secret\n');
    expect(fs.lstatSync(path.join(dir, 'console.token')).isSymbolicLink()).toBe(false);
    expect(mode(path.join(dir, 'console.token'))).toBe(0o600);
    fs.symlinkSync(victim, path.join(dir, 'journal.jsonl'));
    expect(() => new Journal(dir)).toThrow(/ELOOP/);
    expect(() => openPrivate(path.join(dir, 'journal.jsonl'), 'append')).toThrow(/ELOOP/);
    fs.symlinkSync(victim, path.join(dir, 'host.pid'));
    expect(lockSessionDir(dir)).toBeNull();   // the link is replaced by our own file, the victim untouched
    expect(fs.readFileSync(victim, 'utf8')).toBe('secret\n');
  });
});
