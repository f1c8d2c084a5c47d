// The session journal: every successfully executed state-changing command, one JSON line each, appended
// without fsync (the OS page cache survives a host crash; a torn last line is skipped on replay).
// Durability (docs/hardening.md): a command is in the journal before its reply leaves the host, so a host killed
// at any point (SIGKILL) loses no acknowledged command; a power loss or kernel crash can lose what the kernel had
// not written back yet (no fsync: up to vm.dirty_expire_centisecs, 30 s by default), never reorder it.
// It is the scenario being recorded: a restarted host replays it to rebuild the same objects.
//
// It always comes back (docs/hardening.md "A journal that always comes back"):
//  - it is read a chunk at a time, line by line: no string of the whole file, whatever its size;
//  - bulk data stays out of the line: a string argument over BLOB_MIN characters (memory.write's hex) goes to a
//    content-addressed side file, blobs/<sha256>, written before the line that names it ({"$blob": sha, "length": n});
//  - each line carries the CRC-32 of its command's text, so a flipped byte is found, not replayed as another command;
//  - a broken line (not JSON, a bad CRC, an invalid command, a missing or altered blob) stops the replay there with
//    a message: the entries before it are kept, it and the lines after it are moved to journal.rejected-<time>.jsonl
//    (later entries name the handles, keys and addresses the lost one created: replaying them would shift every one,
//    the cascade this avoids). A torn last line (the host died inside a write) is cut off as before.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Command, isReadOnly } from '../protocol/index.ts';
import type { Command as CommandT } from '../protocol/index.ts';
import { openPrivate, privateDir, readPrivate, writePrivate } from './sessiondir.ts';

export const JOURNAL_FILE = 'journal.jsonl';
export const BLOB_DIR = 'blobs';
/** string arguments longer than this go to a side file */
export const BLOB_MIN = 16 * 1024;
/** a line longer than this is not read into memory (a journal line of ours is at most a few KiB plus the 8 MiB a
 *  protocol message may be, in a journal written before the side files) */
export const MAX_LINE = 64 * 1024 * 1024;
const CHUNK = 1 << 20;

/** Commands that only read state are not journaled (replaying them changes nothing): the descriptors' readOnly. */
export const journaled = (cmd: string): boolean => !isReadOnly(cmd);

export interface JournalLine { n: number; command: CommandT }
export interface JournalRead { entries: JournalLine[]; skipped: { line: number; reason: string }[] }
export interface JournalScan { entries: number; skipped: { line: number; reason: string }[] }

/** One line of the file as read: its text (null when over MAX_LINE), 1-based number, byte range, and whether a
 *  newline ended it (the last line of a torn write has none). */
interface RawLine { text: string | null; line: number; start: number; end: number; terminated: boolean; bytes: number }

/** The file's lines, CHUNK bytes read at a time. */
function* readLines(file: string): Generator<RawLine> {
  let fd: number;
  try { fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let parts: Buffer[] = [];
    let partBytes = 0, over = false, start = 0, pos = 0, line = 0;
    for (;;) {
      const got = fs.readSync(fd, buf, 0, CHUNK, pos);
      if (got === 0) break;
      let from = 0;
      for (let i = buf.indexOf(10, 0); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) {
        const bytes = partBytes + (i - from);
        const text = over || bytes > MAX_LINE ? null : Buffer.concat([...parts, buf.subarray(from, i)]).toString('utf8');
        line++;
        yield { text, line, start, end: pos + i + 1, terminated: true, bytes };
        start = pos + i + 1; from = i + 1; parts = []; partBytes = 0; over = false;
      }
      if (from < got) {
        partBytes += got - from;
        if (partBytes > MAX_LINE) { over = true; parts = []; } else parts.push(Buffer.from(buf.subarray(from, got)));
      }
      pos += got;
    }
    if (partBytes > 0) {
      line++;
      yield { text: over ? null : Buffer.concat(parts).toString('utf8'), line, start, end: pos, terminated: false, bytes: partBytes };
    }
  } finally { fs.closeSync(fd); }
}

const crcOf = (text: string): string => zlib.crc32(text).toString(16).padStart(8, '0');
const sha256 = (text: string): string => crypto.createHash('sha256').update(text).digest('hex');

export class Journal {
  readonly file: string;
  readonly blobDir: string;
  private n = 0;
  private fd: number;

  constructor(readonly dir: string) {
    const bad = privateDir(dir);
    if (bad) throw new Error(bad);
    this.file = path.join(dir, JOURNAL_FILE);
    this.blobDir = path.join(dir, BLOB_DIR);
    this.fd = openPrivate(this.file, 'append');
  }

  get count(): number { return this.n; }

  /** Read and validate every line; see scan. */
  read(opts: { repair?: boolean } = {}): JournalRead {
    const entries: JournalLine[] = [];
    const r = this.scan((e) => { entries.push(e); }, opts);
    return { entries, skipped: r.skipped };
  }

  /** Visit the entries in order, one line read at a time (a replay holds one command at a time, whatever the size of
   *  the journal). Problems are reported, not thrown. A torn last line (the host died inside a write: no newline
   *  after it) is reported and cut off the file, so the next append starts a line of its own. The first other broken
   *  line ends the scan: with repair (the default; the host's start), it and the lines after it are moved to a
   *  rejected file and cut off the journal, so what the host appends next follows the entries it replayed. */
  scan(visit: (e: JournalLine) => void, opts: { repair?: boolean } = {}): JournalScan {
    const repair = opts.repair ?? true;
    const out: JournalScan = { entries: 0, skipped: [] };
    for (const raw of readLines(this.file)) {
      if (raw.text !== null && !raw.text.trim()) continue;
      const parsed = raw.text === null ? { error: `line of ${raw.bytes} bytes is over the ${MAX_LINE}-byte limit` } : this.parseLine(raw.text);
      if ('command' in parsed) {
        if (!raw.terminated && repair) fs.writeSync(this.fd, '\n');   // whole but unterminated: terminate it
        out.entries++;
        visit({ n: out.entries, command: parsed.command });
        continue;
      }
      if (!raw.terminated && parsed.json === false) {
        out.skipped.push({ line: raw.line, reason: `torn last line (${raw.bytes} bytes, no newline): removed from the journal` });
        if (repair) fs.ftruncateSync(this.fd, raw.start);
        break;
      }
      out.skipped.push({ line: raw.line, reason: `${parsed.error}: replay stopped here${repair ? this.setAside(raw) : ''}` });
      break;
    }
    this.n = out.entries;
    return out;
  }

  /** One line back to its command: the CRC (when the line has one), the blobs, the schema. json: false when the text
   *  is not JSON at all (what a torn write leaves). */
  private parseLine(text: string): { command: CommandT } | { error: string; json?: false } {
    let obj: { n?: unknown; crc?: unknown; command?: unknown };
    try { obj = JSON.parse(text); } catch (e) { return { error: `not JSON: ${(e as Error).message}`, json: false }; }
    if (obj === null || typeof obj !== 'object') return { error: 'not a journal entry' };
    if (obj.crc !== undefined) {
      const got = crcOf(JSON.stringify(obj.command));
      if (got !== obj.crc) return { error: `CRC mismatch (line says ${String(obj.crc)}, its command gives ${got}): the line was altered` };
    }
    let command: unknown;
    try { command = this.inflate(obj.command); } catch (e) { return { error: (e as Error).message }; }
    const cmd = Command.safeParse(command);
    if (!cmd.success) return { error: `invalid command: ${cmd.error.issues[0]?.message}` };
    return { command: cmd.data };
  }

  /** Moves the broken line and everything after it to journal.rejected-<time>.jsonl and cuts the journal there;
   *  returns the words for the report. */
  private setAside(raw: RawLine): string {
    const name = `journal.rejected-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
    const dest = path.join(this.dir, name);
    const src = fs.openSync(this.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const out = openPrivate(dest, 'append');
    let lines = 0;
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      for (let pos = raw.start; ;) {
        const got = fs.readSync(src, buf, 0, CHUNK, pos);
        if (got === 0) break;
        fs.writeSync(out, buf, 0, got);
        for (let i = buf.indexOf(10, 0); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) lines++;
        pos += got;
      }
    } finally { fs.closeSync(src); fs.closeSync(out); }
    fs.ftruncateSync(this.fd, raw.start);
    const after = Math.max(0, lines - 1);
    return `; it and the ${after} line(s) after it (entries that may name the objects it created) moved to ${name}`;
  }

  /** The stored form: long strings replaced by their blob reference (the blob written first). */
  private deflate(v: unknown): unknown {
    if (typeof v === 'string' && v.length > BLOB_MIN) {
      const sha = sha256(v);
      const file = path.join(this.blobDir, sha);
      if (!fs.existsSync(file)) {
        const bad = privateDir(this.blobDir);
        if (bad) throw new Error(bad);
        const tmp = `${file}.${process.pid}.tmp`;
        writePrivate(tmp, v);
        fs.renameSync(tmp, file);   // whole or absent: a host killed mid-write leaves only a .tmp
      }
      return { $blob: sha, length: v.length };
    }
    if (Array.isArray(v)) return v.map((x) => this.deflate(x));
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = this.deflate(x);
      return o;
    }
    return v;
  }

  /** The command as it was: blob references replaced by their (checked) contents. */
  private inflate(v: unknown): unknown {
    if (Array.isArray(v)) return v.map((x) => this.inflate(x));
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (typeof o.$blob === 'string' && Object.keys(o).length === 2 && typeof o.length === 'number') {
      if (!/^[0-9a-f]{64}$/.test(o.$blob)) throw new Error(`blob reference ${o.$blob.slice(0, 80)} is not a SHA-256`);
      let text: string;
      try { text = readPrivate(path.join(this.blobDir, o.$blob)); } catch (e) {
        throw new Error(`blob ${o.$blob} (${o.length} characters) cannot be read: ${(e as Error).message}`);
      }
      if (text.length !== o.length || sha256(text) !== o.$blob) throw new Error(`blob ${o.$blob} was altered (its contents do not hash to its name)`);
      return text;
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) out[k] = this.inflate(x);
    return out;
  }

  append(command: CommandT): void {
    const text = JSON.stringify(this.deflate(command));
    this.n++;
    fs.writeSync(this.fd, `{"n":${this.n},"crc":"${crcOf(text)}","command":${text}}\n`);
  }

  /** Start over (session.reset): the journal then holds only what follows; the blobs go with it. */
  truncate(): void {
    fs.ftruncateSync(this.fd, 0);
    fs.rmSync(this.blobDir, { recursive: true, force: true });
    this.n = 0;
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }
}

/** One host per session directory: a second one would interleave journal lines. A stale lock (its process is
 *  gone, e.g. after kill -9) is taken over. Returns an error sentence, or null when the lock is ours. The
 *  directory must be private (sessiondir.ts): its refusal is the error sentence. */
export function lockSessionDir(dir: string, pid = process.pid): string | null {
  const bad = privateDir(dir);
  if (bad) return bad;
  const file = path.join(dir, 'host.pid');
  try {
    const other = Number(readPrivate(file).trim());
    if (Number.isInteger(other) && other > 0 && other !== pid) {
      try { process.kill(other, 0); return `session directory ${dir} is in use by another backend host (pid ${other})`; } catch { /* stale */ }
    }
  } catch { /* no lock yet */ }
  writePrivate(file, String(pid));
  return null;
}
