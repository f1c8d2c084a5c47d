// Property tests (fast-check) for the parsers that take outside input on the TypeScript side: the scenario loader
// (files a user opens), the protocol envelope parser (every console message) and the binary event-frame decoder
// (what a console reads off the socket). For any input they answer (a result or a readable error) and never throw
// anything else, loop or crash; mutations of the real scenario library are refused with a message that names
// where, or still load.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, Reply, decodeFrames, frameEvents, isFrameMessage, parseToHost } from '../protocol/index.ts';
import { parseScenarioText, validateScenario } from './load.ts';
import { libraryFiles } from './library.ts';

// the library: scenarios/ and labs/<id>/scenarios/ (app/scenario/library.ts)
const library = libraryFiles().map((f) => ({ file: path.basename(f), text: fs.readFileSync(f, 'utf8') }));
const RUNS = Number(process.env.VL_PROPERTY_RUNS ?? 300);

/** every path (array of keys) inside a JSON value */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}
function setAt(root: unknown, p: (string | number)[], value: unknown): unknown {
  if (!p.length) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let o = copy;
  for (const k of p.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[p[p.length - 1]!] = value;
  return copy;
}
function expectLoadAnswer(r: ReturnType<typeof parseScenarioText>): void {
  if (r.ok) return;
  expect(typeof r.error.message).toBe('string');
  expect(r.error.message.length).toBeGreaterThan(0);
  if (r.error.step !== undefined) expect(Number.isInteger(r.error.step) && r.error.step >= 1).toBe(true);
}

describe('scenario loader (fast-check)', () => {
  it('the library loads, and loads again from its own JSON', () => {
    expect(library.length).toBeGreaterThan(10);
    for (const { file, text } of library) {
      const r = parseScenarioText(text, file);
      expect(r.ok, file).toBe(true);
      if (r.ok) expect(validateScenario(JSON.parse(JSON.stringify(r.scenario)), file).ok, file).toBe(true);
    }
  });

  it('any text gets a result or a readable error (never a throw)', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'binary' })), (text) => {
      expectLoadAnswer(parseScenarioText(text, 'fuzz.json'));
    }), { numRuns: RUNS });
  }, 120_000);

  it('a step whose command is a member of every object ("toString", "__proto__", "constructor") is an unknown command', () => {
    for (const cmd of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) {
      const r = validateScenario({ ...(JSON.parse(library[0]!.text) as object), steps: [{ cmd, args: {} }] });
      expect(r.ok, cmd).toBe(false);
      if (!r.ok) expect(r.error.message, cmd).toContain('unknown command');
    }
  });

  it('a library scenario with any value replaced anywhere is refused with where, or still loads', () => {
    const parsed = library.map((l) => ({ file: l.file, data: JSON.parse(l.text) as unknown, paths: paths(JSON.parse(l.text)) }));
    fc.assert(fc.property(fc.nat(), fc.nat(), fc.jsonValue(), (which, where, value) => {
      const sc = parsed[which % parsed.length]!;
      const p = sc.paths[where % sc.paths.length]!;
      const r = validateScenario(setAt(sc.data, p, value), sc.file);
      expectLoadAnswer(r);
      // a broken step is named by its number
      if (!r.ok && p[0] === 'steps' && typeof p[1] === 'number' && r.error.step !== undefined) expect(r.error.step).toBeGreaterThanOrEqual(1);
    }), { numRuns: RUNS * 3 });
  }, 120_000);

  it('truncated and spliced library files answer too', () => {
    fc.assert(fc.property(fc.nat(), fc.nat(), fc.string(), (which, cut, junk) => {
      const { file, text } = library[which % library.length]!;
      const at = cut % (text.length + 1);
      expectLoadAnswer(parseScenarioText(text.slice(0, at), file));
      expectLoadAnswer(parseScenarioText(text.slice(0, at) + junk + text.slice(at), file));
    }), { numRuns: RUNS });
  }, 120_000);
});

describe('protocol envelope parser (fast-check)', () => {
  it('any value or text from a client gets a well-formed error reply or a valid message', () => {
    fc.assert(fc.property(fc.oneof(fc.anything(), fc.json(), fc.string()), (raw) => {
      const r = parseToHost(raw);
      if (r.ok) return;
      expect(Reply.safeParse(r.reply).success).toBe(true);
      expect(r.reply.ok).toBe(false);
      expect(r.reply.error?.message.length).toBeGreaterThan(0);
    }), { numRuns: RUNS * 3 });
  }, 120_000);

  it('requests with arbitrary commands and args are answered with their own id when they carry one', () => {
    const cmd = fc.oneof(fc.constantFrom('device.list', 'pd.alloc', 'post.send', 'mr.reg', 'qp.modify', 'memory.write', 'scenario.load'), fc.string());
    fc.assert(fc.property(fc.nat({ max: 2 ** 31 }), cmd, fc.dictionary(fc.string(), fc.jsonValue()), (id, c, args) => {
      const r = parseToHost(JSON.stringify({ type: 'request', id, command: { cmd: c, args } }));
      if (r.ok) { expect(r.msg.type).toBe('request'); return; }
      expect(r.reply.id).toBe(id);
      expect(r.reply.error?.code).toBe('BAD_REQUEST');
      expect(r.reply.error?.field ?? '').toMatch(/^command/);
    }), { numRuns: RUNS * 3 });
  }, 120_000);

});

describe('binary event-frame decoder (fast-check)', () => {
  it('any bytes are decoded or refused with an Error, never anything else', () => {
    const magic = new Uint8Array([0x56, 0x4c, 0x45, 0x31]);   // "VLE1" (FRAME_MAGIC, little-endian)
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), fc.boolean(), (bytes, withMagic) => {
      const data = withMagic && bytes.length >= 4 ? new Uint8Array([...magic, ...bytes.subarray(4)]) : bytes;
      if (!isFrameMessage(data)) return;
      try { decodeFrames(data); } catch (e) { expect(e).toBeInstanceOf(Error); }
    }), { numRuns: RUNS * 3 });
  }, 120_000);

  it('a frame whose header adds up but whose columns, texts and packets are random: events or an Error', () => {
    fc.assert(fc.property(fc.nat({ max: 6 }), fc.nat({ max: 96 }), fc.nat({ max: 96 }), fc.uint8Array({ minLength: 1024, maxLength: 1024 }), (n, xb, bb, noise) => {
      const total = FRAME_HEADER_BYTES + ((n * 63 + 7) & ~7) + ((xb + 7) & ~7) + ((bb + 7) & ~7);
      const bytes = new Uint8Array(total);
      bytes.set(noise.subarray(0, total));
      const v = new DataView(bytes.buffer);
      v.setUint32(0, FRAME_MAGIC, true); v.setUint32(4, total, true); v.setUint32(8, n, true); v.setUint32(24, xb, true); v.setUint32(28, bb, true);
      expect(decodeFrames(bytes).length).toBe(1);
      try {
        const evs = frameEvents(bytes);
        expect(evs.length).toBe(n);
      } catch (e) { expect(e).toBeInstanceOf(Error); }
    }), { numRuns: RUNS * 3 });
  }, 120_000);
});
