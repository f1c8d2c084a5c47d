// The session directory is private to the user who runs the host (docs/hardening.md "A private session directory"):
// created 0700; refused when another user owns it or group/others may write into it (they could plant a symlink or a
// file the host, perhaps root, would then write through or trust); its files are created 0600 with O_NOFOLLOW (and
// O_EXCL where the file is new), so a link planted before the host started is never followed.
import fs from 'node:fs';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY, O_APPEND, O_RDWR } = fs.constants;

const uid = (): number | undefined => process.getuid?.();

/** Create dir (0700) or check it: null when it is ours and private, else the sentence that says why it is refused.
 *  A directory of ours readable by others (an older 0755 .verbslab) is tightened to 0700. */
export function privateDir(dir: string): string | null {
  try { fs.mkdirSync(dir, { recursive: true, mode: 0o700 }); } catch (e) { return `session directory ${dir}: ${(e as Error).message}`; }
  let st: fs.Stats;
  try { st = fs.statSync(dir); } catch (e) { return `session directory ${dir}: ${(e as Error).message}`; }
  if (!st.isDirectory()) return `session directory ${dir} is not a directory`;
  const me = uid();
  if (me !== undefined && st.uid !== me) {
    return `session directory ${dir} belongs to uid ${st.uid}, not to you (uid ${me}): its journal and token would be ` +
      `another user's to change; choose a directory of your own (--session-dir)`;
  }
  if (st.mode & 0o022) {
    return `session directory ${dir} is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)}): ` +
      `another user could plant a file or a symlink there; run chmod 700 ${dir} or choose another directory (--session-dir)`;
  }
  if (st.mode & 0o077) fs.chmodSync(dir, 0o700);
  return null;
}

/** Open (or create, 0600) a file of the session directory without following a symlink; an existing file is
 *  made 0600 and must be a regular file of ours. flags: 'append' (O_APPEND) or 'rw'. */
export function openPrivate(file: string, flags: 'append' | 'rw'): number {
  const fd = fs.openSync(file, (flags === 'append' ? O_WRONLY | O_APPEND : O_RDWR) | O_CREAT | O_NOFOLLOW, 0o600);
  try {
    const st = fs.fstatSync(fd);
    const me = uid();
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if (me !== undefined && st.uid !== me) throw new Error(`${file} belongs to uid ${st.uid}, not to you (uid ${me})`);
    if (st.mode & 0o077) fs.fchmodSync(fd, 0o600);
  } catch (e) { fs.closeSync(fd); throw e; }
  return fd;
}

/** Write a small file of the session directory afresh: whatever was there (a file, a planted symlink) is removed,
 *  and the new one created 0600 with O_EXCL | O_NOFOLLOW (an entry that reappears in between is refused, not used). */
export function writePrivate(file: string, text: string): void {
  fs.rmSync(file, { force: true });
  const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try { fs.writeSync(fd, text); } finally { fs.closeSync(fd); }
}

/** Read a file of the session directory without following a symlink (ELOOP when it is one). */
export function readPrivate(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW);
  try { return fs.readFileSync(fd, 'utf8'); } finally { fs.closeSync(fd); }
}
