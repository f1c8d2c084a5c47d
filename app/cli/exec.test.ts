// verbslab exec: option parsing and the environment it gives the program (the library directory first).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIB_DIR, libEnv, parseArgs } from './exec.ts';

describe('verbslab exec', () => {
  it('takes the program after "--" and maps options to the library environment', () => {
    const o = parseArgs(['--addr', '127.0.0.7', '--profile=cx', '--no-build', '--', 'ibv_rc_pingpong', '-g', '1']);
    expect(typeof o).toBe('object');
    if (typeof o === 'string') return;
    expect(o.argv).toEqual(['ibv_rc_pingpong', '-g', '1']);
    expect(o.env).toEqual({ VERBSLAB_ADDR: '127.0.0.7', VERBSLAB_PROFILE: 'cx' });
    expect(o.build).toBe(false);
  });
  it('takes the program without "--" and leaves its own options alone', () => {
    const o = parseArgs(['ib_write_bw', '-d', 'vlrxe0', '--addr', 'x']);
    if (typeof o === 'string') throw new Error(o);
    expect(o.argv).toEqual(['ib_write_bw', '-d', 'vlrxe0', '--addr', 'x']);
    expect(o.env).toEqual({});
  });
  it('--console names the console to stream to (its session directory by default ./.verbslab) in VERBSLAB_CONSOLE', () => {
    const a = parseArgs(['--console', '--', 'ibv_devinfo']);
    if (typeof a === 'string') throw new Error(a);
    expect(a.env).toEqual({ VERBSLAB_CONSOLE: path.resolve('.verbslab') });
    const b = parseArgs(['--console=/tmp/s/console.sock', 'ibv_devinfo']);
    if (typeof b === 'string') throw new Error(b);
    expect(b.env).toEqual({ VERBSLAB_CONSOLE: '/tmp/s/console.sock' });
    expect(parseArgs(['--console=', '--', 'x'])).toMatch(/needs a directory or a socket/);
  });
  it('refuses bad input with a reason', () => {
    expect(parseArgs([])).toBe('no PROGRAM given');
    expect(parseArgs(['--addr'])).toBe('--addr: needs a value');
    expect(parseArgs(['--udp-port', '70000', '--', 'x'])).toMatch(/not a UDP port/);
    expect(parseArgs(['--frobnicate', '--', 'x'])).toBe('unknown option --frobnicate');
  });
  it('puts the library directory first in LD_LIBRARY_PATH, keeping what was there', () => {
    expect(libEnv({}, { LD_LIBRARY_PATH: '/opt/x' }).LD_LIBRARY_PATH).toBe(`${LIB_DIR}:/opt/x`);
    expect(libEnv({ VERBSLAB_ADDR: '127.0.0.2' }, {})).toEqual({ LD_LIBRARY_PATH: LIB_DIR, VERBSLAB_ADDR: '127.0.0.2' });
  });
});
