// Browser-mode entry: node --import tsx app/server/main.ts [--port N] [--session-dir DIR] [--seed N]
//   [--default-device rxe|none]. Prints "Verbs Lab console: URL" (the URL carries the per-launch token).
// VERBSLAB_TOKEN fixes the token (used by the Playwright web server); VERBSLAB_PORT the port.
import { startServer } from './server.ts';

async function main() {
  const argv = process.argv.slice(2);
  let port = process.env.VERBSLAB_PORT !== undefined ? Number(process.env.VERBSLAB_PORT) : 5199;
  let portGiven = process.env.VERBSLAB_PORT !== undefined;
  let sessionDir: string | undefined;
  let seed: number | undefined;
  let defaultDevice: string | null | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { const v = argv[++i]; if (v === undefined) { console.error(`${a} needs a value`); process.exit(2); } return v; };
    if (a === '--port') { port = Number(val()); portGiven = true; }
    else if (a === '--session-dir') sessionDir = val();
    else if (a === '--seed') seed = Number(val());
    else if (a === '--default-device') { const v = val(); defaultDevice = v === 'none' ? null : v; }
    else { console.error(`unknown argument ${a}`); process.exit(2); }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) { console.error(`--port: expected 0..65535, got ${port}`); process.exit(2); }
  const common = { sessionDir, seed, defaultDevice, token: process.env.VERBSLAB_TOKEN || undefined };
  let srv;
  try {
    srv = await startServer({ port, ...common });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' && !portGiven) {
      console.log(`port ${port} is busy; using a free port instead`);
      srv = await startServer({ port: 0, ...common });
    } else {
      console.error(`cannot listen on 127.0.0.1:${port}: ${(e as Error).message}`);
      process.exit(1);
    }
  }
  console.log(`Verbs Lab console: ${srv.url}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await srv.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();
