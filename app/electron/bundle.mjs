// Bundles the Electron entry points and the backend host for Electron (esbuild, from tsx's dependency):
//   app/electron/main.ts    -> dist/electron/main.cjs
//   app/electron/preload.ts -> dist/electron/preload.cjs   (sandboxed preload: single file, only 'electron')
//   app/host/main.ts        -> dist/host/main.mjs          (utility process; loads build/Release/verbslab.node)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function bundleElectron() {
  const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', sourcemap: 'inline', absWorkingDir: root };
  await build({ ...common, entryPoints: ['app/electron/main.ts'], outfile: 'dist/electron/main.cjs', format: 'cjs', external: ['electron'] });
  await build({ ...common, entryPoints: ['app/electron/preload.ts'], outfile: 'dist/electron/preload.cjs', format: 'cjs', external: ['electron'] });
  await build({ ...common, entryPoints: ['app/host/main.ts'], outfile: 'dist/host/main.mjs', format: 'esm', external: ['*.node'] });
  // optional host extensions (scenario recorder, labs, attach), attached by main.mjs when present
  for (const ext of ['recorder', 'labs', 'attach']) {
    if (fs.existsSync(path.join(root, `app/host/${ext}.ts`))) {
      await build({ ...common, entryPoints: [`app/host/${ext}.ts`], outfile: `dist/host/${ext}.mjs`, format: 'esm', external: ['*.node'] });
    } else fs.rmSync(path.join(root, `dist/host/${ext}.mjs`), { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  bundleElectron().then(() => console.log('electron bundles: dist/electron/{main,preload}.cjs, dist/host/main.mjs'), (e) => { console.error(e.message); process.exit(1); });
}
