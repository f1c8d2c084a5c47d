// The session journal: every successfully executed state-changing command, one JSON line each, appended
// without fsync (the OS page cache survives a host crash; a torn last line is skipped on replay).
// Durability (docs/hardening.md): a command is in the journal before its reply leaves the host, so a host killed
// at any point (SIGKILL) loses no acknowledged command; a power loss or kernel crash can lose what the kernel had
// not written back yet (no fsync: up to vm.dirty_expire_centisecs, 30 s by default), never reorder it.
// It is the scenario being recorded: a restarted host replays it to rebuild the same objects.
import fs from 'node:fs';
import path from 'node:path';
import { Command, isReadOnly } from '../protocol/index.ts';
import type { Command as CommandT } from '../protocol/index.ts';

export const JOURNAL_FILE = 'journal.jsonl';

/** Commands that only read state are not journaled (replaying them changes nothing): the descriptors' readOnly. */
export const journaled = (cmd: string): boolean => !isReadOnly(cmd);

export interface JournalLine { n: number; command: CommandT }
export interface JournalRead { entries: JournalLine[]; skipped: { line: number; reason: string }[] }

export class Journal {
  readonly file: string;
  private n = 0;

  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, JOURNAL_FILE);
  }

  get count(): number { return this.n; }

  /** Read and validate every line; broken or invalid lines are reported, not thrown. A torn last line (the host
   *  died inside a write: no newline after it) is reported and cut off the file, so the next append starts a line of
   *  its own instead of being glued to the fragment (and lost with it at the next replay). */
  read(): JournalRead {
    const out: JournalRead = { entries: [], skipped: [] };
    if (!fs.existsSync(this.file)) return out;
    const raw = fs.readFileSync(this.file, 'utf8');
    const lines = raw.split('\n');
    const whole = raw.lastIndexOf('\n') + 1;
    lines.forEach((text, i) => {
      if (!text.trim()) return;
      const torn = i === lines.length - 1;   // the text after the last newline
      let obj: unknown;
      try { obj = JSON.parse(text); } catch (e) {
        out.skipped.push({ line: i + 1, reason: torn ? `torn last line (${text.length} bytes, no newline): removed from the journal` : `not JSON: ${(e as Error).message}` });
        if (torn) fs.truncateSync(this.file, Buffer.byteLength(raw.slice(0, whole)));
        return;
      }
      const cmd = Command.safeParse((obj as { command?: unknown })?.command);
      if (!cmd.success) { out.skipped.push({ line: i + 1, reason: `invalid command: ${cmd.error.issues[0]?.message}` }); return; }
      if (torn) fs.appendFileSync(this.file, '\n');   // whole but unterminated: terminate it
      out.entries.push({ n: out.entries.length + 1, command: cmd.data });
    });
    this.n = out.entries.length;
    return out;
  }

  append(command: CommandT): void {
    this.n++;
    fs.appendFileSync(this.file, JSON.stringify({ n: this.n, command }) + '\n');
  }

  /** Start over (session.reset): the journal then holds only what follows. */
  truncate(): void {
    fs.writeFileSync(this.file, '');
    this.n = 0;
  }
}

/** One host per session directory: a second one would interleave journal lines. A stale lock (its process is
 *  gone, e.g. after kill -9) is taken over. Returns an error sentence, or null when the lock is ours. */
export function lockSessionDir(dir: string, pid = process.pid): string | null {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'host.pid');
  try {
    const other = Number(fs.readFileSync(file, 'utf8').trim());
    if (Number.isInteger(other) && other > 0 && other !== pid) {
      try { process.kill(other, 0); return `session directory ${dir} is in use by another backend host (pid ${other})`; } catch { /* stale */ }
    }
  } catch { /* no lock yet */ }
  fs.writeFileSync(file, String(pid));
  return null;
}

