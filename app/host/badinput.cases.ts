// One table of bad client input, sent by app/server/badinput.test.ts over the WebSocket (as text) and by
// app/host/badinput.test.ts over a MessagePort (as structured-clone values, the Electron path). Each case names
// the reply it must get; after each one the same session must still answer a good command.

export interface BadInput {
  what: string;
  /** the message: a JSON text (WebSocket) that the MessagePort path sends parsed when it is JSON */
  text: string;
  /** the reply's error code */
  code: string;
  /** the reply's id (null: the message was too broken to carry one) */
  id: number | null;
  /** the start of the error's field, when it names one */
  field?: string;
  /** a piece of the error message */
  says?: string;
  /** the code over a MessagePort when it differs (no 8 MiB envelope limit there: zod's per-field maxima apply) */
  portCode?: string;
  /** the reply's id over a MessagePort when it differs */
  portId?: number | null;
}

const req = (id: number, command: unknown) => JSON.stringify({ type: 'request', id, command });

/** deeply nested arrays: JSON.parse copes, a recursive walker would not */
export const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

export const BAD_INPUTS: BadInput[] = [
  { what: 'not JSON', text: '{"type":"request", id: 1', code: 'BAD_JSON', id: null, says: 'not JSON' },
  { what: 'empty text', text: '', code: 'BAD_JSON', id: null },
  { what: 'JSON null', text: 'null', code: 'BAD_REQUEST', id: null },
  { what: 'a bare number', text: '42', code: 'BAD_REQUEST', id: null },
  { what: 'an array', text: '[1,2,3]', code: 'BAD_REQUEST', id: null },
  { what: 'unknown envelope type', text: '{"type":"shutdown","id":3}', code: 'BAD_REQUEST', id: 3, field: 'type' },
  { what: 'deep nesting (100 000 levels) as the whole message', text: deep(100_000), code: 'BAD_REQUEST', id: null },
  { what: 'deep nesting inside a command\'s args', text: `{"type":"request","id":4,"command":{"cmd":"device.list","args":{"x":${deep(100_000)}}}}`, code: 'BAD_REQUEST', id: 4, field: 'command' },
  { what: 'unknown command', text: req(5, { cmd: 'qp.explode', args: {} }), code: 'BAD_REQUEST', id: 5, field: 'command.cmd' },
  { what: 'wrong type: a handle as a string', text: req(6, { cmd: 'pd.alloc', args: { device: '1' } }), code: 'BAD_REQUEST', id: 6, field: 'command.args.device' },
  { what: 'wrong type: args as an array', text: req(7, { cmd: 'device.list', args: [] }), code: 'BAD_REQUEST', id: 7, field: 'command.args' },
  { what: 'wrong type: the id as a string', text: JSON.stringify({ type: 'request', id: '8', command: { cmd: 'device.list', args: {} } }), code: 'BAD_REQUEST', id: null, field: 'id' },
  { what: 'an unexpected extra key (prototype pollution attempt)', text: `{"type":"request","id":9,"command":{"cmd":"device.list","args":{}},"__proto__":{"polluted":true}}`, code: 'BAD_REQUEST', id: 9 },
  { what: 'huge number: 1e308 bytes', text: req(10, { cmd: 'buffer.alloc', args: { length: 1e308 } }), code: 'BAD_REQUEST', id: 10, field: 'command.args.length' },
  { what: 'huge number: an id over 2^53', text: '{"type":"request","id":18014398509481984,"command":{"cmd":"device.list","args":{}}}', code: 'BAD_REQUEST', id: 18014398509481984, field: 'id' },
  { what: 'huge number: a 64-bit wrId with 21 digits', text: req(11, { cmd: 'post.send', args: { qp: 1, wrs: [{ opcode: 'IBV_WR_SEND', wrId: '999999999999999999999' }] } }), code: 'BAD_REQUEST', id: 11, field: 'command.args.wrs.0.wrId' },
  { what: 'huge number: 10^9 engine steps', text: req(12, { cmd: 'engine.step', args: { count: 1e9 } }), code: 'BAD_REQUEST', id: 12, field: 'command.args.count' },
  { what: 'huge number: a read at the top of the address space', text: req(13, { cmd: 'memory.read', args: { addr: Number.MAX_SAFE_INTEGER, length: 1 << 20 } }), code: 'EFAULT', id: 13 },
  { what: 'huge number: an MR of 4 GiB at the top of the address space', text: req(14, { cmd: 'mr.reg', args: { pd: 2, addr: Number.MAX_SAFE_INTEGER, length: 2 ** 32, access: ['IBV_ACCESS_LOCAL_WRITE'] } }), code: 'EFAULT', id: 14 },
  { what: 'NaN-like text for a number', text: '{"type":"request","id":15,"command":{"cmd":"engine.step","args":{"count":"NaN"}}}', code: 'BAD_REQUEST', id: 15, field: 'command.args.count' },
  { what: 'negative length: buffer', text: req(16, { cmd: 'buffer.alloc', args: { length: -4096 } }), code: 'BAD_REQUEST', id: 16, field: 'command.args.length' },
  { what: 'negative length: memory read', text: req(17, { cmd: 'memory.read', args: { addr: 0, length: -1 } }), code: 'BAD_REQUEST', id: 17, field: 'command.args.length' },
  { what: 'negative length: a scatter/gather element', text: req(18, { cmd: 'post.recv', args: { qp: 1, wrs: [{ sgList: [{ addr: 0, length: -1, lkey: 1 }] }] } }), code: 'BAD_REQUEST', id: 18, field: 'command.args.wrs.0.sgList.0.length' },
  { what: 'a negative handle', text: req(19, { cmd: 'pd.dealloc', args: { pd: -2 } }), code: 'BAD_REQUEST', id: 19, field: 'command.args.pd' },
  { what: 'a handle that names nothing', text: req(20, { cmd: 'qp.query', args: { qp: 4_000_000_000 } }), code: 'ENOENT', id: 20 },
  { what: 'a handle of the wrong kind (the PD as a QP)', text: req(21, { cmd: 'qp.query', args: { qp: 2 } }), code: 'ENOENT', id: 21 },
  { what: 'a bad acknowledgement', text: '{"type":"ack","seq":-5}', code: 'BAD_REQUEST', id: null, field: 'seq' },
  { what: 'a control message with an unknown action', text: '{"type":"control","action":"format-disk"}', code: 'BAD_REQUEST', id: null, field: 'action' },
  { what: 'a message just over the protocol\'s 8 MiB (under the socket limit)', text: req(22, { cmd: 'scenario.load', args: { text: 'x'.repeat(8 * 1024 * 1024 + 16) } }), code: 'TOO_LARGE', id: null, portCode: 'BAD_REQUEST', portId: 22 },
];

/** a good command for "the session goes on": the device created at start is there */
export const GOOD = (id: number) => req(id, { cmd: 'device.list', args: {} });
