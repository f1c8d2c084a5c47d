/** CHROMIUM_PATH, else chromium / chromium-browser on PATH, else Playwright's cache; null if none. */
export function findChromium(): string | null;
/** a TCP port free on 127.0.0.1 right now */
export function freePort(): Promise<number>;
