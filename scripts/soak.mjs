#!/usr/bin/env node
// Chaos soak (native/tools/vl_soak.cpp): two software devices over real UDP on loopback, RC WRITE / READ / SEND /
// atomics of random sizes with the devices' own fault injection and corrupted datagrams, every byte and every
// completion checked, memory watched.
//   npm run soak -- --minutes N   (default 1)      npm run soak -- --seconds S --json   (npm test's 30 s run)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTools } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const seconds = arg('--seconds') !== undefined ? Number(arg('--seconds')) : 60 * Number(arg('--minutes') ?? 1);
if (!(seconds > 0)) { console.error('--minutes / --seconds: expected a positive number'); process.exit(2); }
try { await buildTools('release'); } catch (e) { console.error(`build failed: ${e.message}`); process.exit(1); }
const extra = ['--seed', arg('--seed') ?? String(Date.now() % 100000), ...(argv.includes('--json') ? ['--json'] : [])];
const c = spawn(path.join(root, 'build', 'native', 'vl_soak'), ['--seconds', String(seconds), ...extra], { stdio: 'inherit' });
c.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
