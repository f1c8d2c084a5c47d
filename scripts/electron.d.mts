/** ELECTRON_PATH (a binary), else ELECTRON_OVERRIDE_DIST_PATH or node_modules/electron/dist (a folder); null if none. */
export function findElectron(env?: NodeJS.ProcessEnv, dir?: string): string | null;
export type InstallResult = { ok: true; binary: string } | { ok: false; reason: string };
/** Electron's own install step, bounded in time; the actual reason in one line when it does not give a binary. */
export function installElectron(opts?: { timeoutMs?: number; installer?: string; env?: NodeJS.ProcessEnv; dir?: string; log?: (line: string) => void }): Promise<InstallResult>;
/** The one line `npm start` prints when it serves the console in the browser instead of a window. */
export function fallbackLine(reason: string): string;
