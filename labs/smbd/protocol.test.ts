// The protocol core without a device: byte formats against [MS-SMBD] 4.1's example (the golden vector), every
// negotiation rule of 3.1.5.6 / 3.1.5.7 failing on its own, ksmbd's stricter minimums, fragmentation at exactly
// MaxSendSize - 24 and one byte over, reassembly, the receive checks of 3.1.5.8, the keepalive timers.
import { describe, expect, it } from 'vitest';
import {
  decodeBufferDescriptorV1, decodeDataTransfer, decodeNegotiateRequest, decodeNegotiateResponse, encodeBufferDescriptorV1,
  encodeDataTransfer, encodeNegotiateRequest, encodeNegotiateResponse, fromHex, toHex, STATUS_NOT_SUPPORTED,
} from './pdu.ts';
import {
  checkNegotiateRequest, checkNegotiateResponse, negotiateRequestOf, negotiateResponseOf, notSupportedResponse,
} from './negotiate.ts';
import type { NegotiatedSizes } from './negotiate.ts';
import { SmbdConnection } from './conn.ts';
import type { Action } from './conn.ts';
import { LINUX_CONFIG, PROFILES, SPEC_EXAMPLE_CONFIG } from './profiles.ts';

// [MS-SMBD] 4.1 Establishing a Connection: the request and response fields, as little-endian bytes
const GOLDEN_REQ = '00010001' + '0000' + '0a00' + '00040000' + '00040000' + '00000200';
const GOLDEN_RESP = '00010001' + '0001' + '0000' + '0a00' + '0a00' + '00000000' + '00001000' + '00040000' + '00040000' + '00000200';

describe('[MS-SMBD] 4.1 golden vectors', () => {
  it('the example negotiate request is what the active side builds from the example configuration', () => {
    const req = negotiateRequestOf(SPEC_EXAMPLE_CONFIG);
    expect(toHex(encodeNegotiateRequest(req))).toBe(GOLDEN_REQ);
    expect(decodeNegotiateRequest(fromHex(GOLDEN_REQ))).toEqual({
      minVersion: 0x0100, maxVersion: 0x0100, reserved: 0, creditsRequested: 10,
      preferredSendSize: 1024, maxReceiveSize: 1024, maxFragmentedSize: 131072,
    });
  });

  it('the passive side accepts it and answers the example response byte for byte (10 receives posted)', () => {
    const c = checkNegotiateRequest(fromHex(GOLDEN_REQ), PROFILES.spec, SPEC_EXAMPLE_CONFIG);
    expect(c.outcome).toBe('accept');
    expect(c.rules.every((r) => r.pass)).toBe(true);
    expect(c.rules.map((r) => r.id)).toEqual(['req.length', 'req.version', 'req.credits-requested', 'req.max-receive-size', 'req.max-fragmented-size']);
    const resp = negotiateResponseOf(SPEC_EXAMPLE_CONFIG, c.sizes!, 10);
    expect(toHex(encodeNegotiateResponse(resp))).toBe(GOLDEN_RESP);
  });

  it('the active side accepts the example response: sizes and credits as 4.1 says', () => {
    const c = checkNegotiateResponse(fromHex(GOLDEN_RESP), SPEC_EXAMPLE_CONFIG);
    expect(c.outcome).toBe('accept');
    expect(c.sizes).toEqual({
      maxReceiveSize: 1024, maxSendSize: 1024, maxFragmentedSendSize: 131072, maxFragmentedRecvSize: 131072,
      maxReadWriteSize: 1048576, sendCredits: 10, receiveCreditTarget: 10,
    });
    expect(decodeNegotiateResponse(fromHex(GOLDEN_RESP)).maxReadWriteSize).toBe(0x00100000);
  });
});

describe('3.1.5.6: the passive side checks the request', () => {
  const base = negotiateRequestOf(SPEC_EXAMPLE_CONFIG);
  const check = (over: Partial<typeof base>, profile = PROFILES.spec) =>
    checkNegotiateRequest(encodeNegotiateRequest({ ...base, ...over }), profile, SPEC_EXAMPLE_CONFIG);
  const failed = (o: ReturnType<typeof check>) => o.rules.filter((r) => !r.pass).map((r) => r.id);

  it('a request shorter than 20 bytes terminates', () => {
    const o = checkNegotiateRequest(fromHex(GOLDEN_REQ).subarray(0, 19), PROFILES.spec, SPEC_EXAMPLE_CONFIG);
    expect(o.outcome).toBe('terminate');
    expect(failed(o)).toEqual(['req.length']);
  });
  it('a version range without 1.0: spec answers STATUS_NOT_SUPPORTED, ksmbd terminates', () => {
    expect(check({ minVersion: 0x0200, maxVersion: 0x0200 }).outcome).toBe('reject');
    expect(failed(check({ minVersion: 0x0200, maxVersion: 0x0200 }))).toEqual(['req.version']);
    expect(check({ maxVersion: 0x00ff, minVersion: 0x0001 }, PROFILES.ksmbd).outcome).toBe('terminate');
    const r = notSupportedResponse();
    expect(r.status).toBe(STATUS_NOT_SUPPORTED);
    expect(toHex(encodeNegotiateResponse(r)).slice(24, 32)).toBe('bb0000c0');
  });
  it('ksmbd refuses [MS-SMBD] 4.1\'s own example request: its MaxFragmentedSize is exactly 128 KiB', () => {
    const o = checkNegotiateRequest(fromHex(GOLDEN_REQ), PROFILES.ksmbd, SPEC_EXAMPLE_CONFIG);
    expect(o.outcome).toBe('terminate');
    expect(failed(o)).toEqual(['req.max-fragmented-size']);
  });
  it('CreditsRequested 0 terminates', () => {
    expect(failed(check({ creditsRequested: 0 }))).toEqual(['req.credits-requested']);
    expect(check({ creditsRequested: 0 }).outcome).toBe('terminate');
  });
  it('MaxReceiveSize: 127 fails, 128 passes the spec and fails ksmbd (<= 128), 129 passes both', () => {
    expect(failed(check({ maxReceiveSize: 127 }))).toEqual(['req.max-receive-size']);
    expect(check({ maxReceiveSize: 128 }).outcome).toBe('accept');
    expect(failed(check({ maxReceiveSize: 128, maxFragmentedSize: 131073 }, PROFILES.ksmbd))).toEqual(['req.max-receive-size']);
    expect(check({ maxReceiveSize: 129, maxFragmentedSize: 131073 }, PROFILES.ksmbd).outcome).toBe('accept');
  });
  it('MaxFragmentedSize: 131071 fails, 131072 passes the spec and fails ksmbd, 131073 passes both', () => {
    expect(failed(check({ maxFragmentedSize: 131071 }))).toEqual(['req.max-fragmented-size']);
    expect(check({ maxFragmentedSize: 131072 }).outcome).toBe('accept');
    expect(failed(check({ maxFragmentedSize: 131072 }, PROFILES.ksmbd))).toEqual(['req.max-fragmented-size']);
    expect(check({ maxFragmentedSize: 131073 }, PROFILES.ksmbd).outcome).toBe('accept');
  });
  it('resulting sizes: MaxReceiveSize = min(own, peer PreferredSendSize) with a floor of 128; MaxSendSize = min(own, peer MaxReceiveSize)', () => {
    const o = checkNegotiateRequest(encodeNegotiateRequest(negotiateRequestOf(LINUX_CONFIG)), PROFILES.spec, SPEC_EXAMPLE_CONFIG);
    expect(o.sizes).toMatchObject({ maxReceiveSize: 1024, maxSendSize: 1024, receiveCreditTarget: 255, maxFragmentedSendSize: 173910 });
    const small = check({ preferredSendSize: 64 });
    expect(small.sizes!.maxReceiveSize).toBe(128);
  });
});

describe('3.1.5.7: the active side checks the response', () => {
  const base = negotiateResponseOf(SPEC_EXAMPLE_CONFIG, checkNegotiateRequest(fromHex(GOLDEN_REQ), PROFILES.spec, SPEC_EXAMPLE_CONFIG).sizes!, 10);
  const failed = (over: Partial<typeof base>) => {
    const o = checkNegotiateResponse(encodeNegotiateResponse({ ...base, ...over }), SPEC_EXAMPLE_CONFIG);
    expect(o.outcome).toBe('terminate');
    return o.rules.filter((r) => !r.pass).map((r) => r.id);
  };
  it('each rule fails on its own', () => {
    expect(checkNegotiateResponse(fromHex(GOLDEN_RESP).subarray(0, 31), SPEC_EXAMPLE_CONFIG).rules.map((r) => [r.id, r.pass])).toEqual([['resp.length', false]]);
    expect(failed({ negotiatedVersion: 0x0200 })).toEqual(['resp.negotiated-version']);
    expect(failed({ status: STATUS_NOT_SUPPORTED })).toEqual(['resp.status']);
    expect(failed({ maxReceiveSize: 127 })).toEqual(['resp.max-receive-size']);
    expect(failed({ maxFragmentedSize: 131071 })).toEqual(['resp.max-fragmented-size']);
    expect(failed({ creditsGranted: 0 })).toEqual(['resp.credits-granted']);
    expect(failed({ creditsRequested: 0 })).toEqual(['resp.credits-requested']);
    expect(failed({ preferredSendSize: 1025 })).toEqual(['resp.preferred-send-size']);
  });
  it('the minimums themselves pass (128, 131072)', () => {
    const o = checkNegotiateResponse(encodeNegotiateResponse({ ...base, maxReceiveSize: 128, maxFragmentedSize: 131072 }), SPEC_EXAMPLE_CONFIG);
    expect(o.outcome).toBe('accept');
    expect(o.sizes!.maxSendSize).toBe(128);
  });
});

describe('data transfer and buffer descriptor formats', () => {
  it('a message without data is 20 bytes, DataOffset 0; with data the header is 24 and DataOffset 24', () => {
    const empty = encodeDataTransfer({ creditsRequested: 255, creditsGranted: 3, flags: 1, remainingDataLength: 0 });
    expect(toHex(empty)).toBe('ff000300010000000000000000000000' + '00000000');
    const d = encodeDataTransfer({ creditsRequested: 10, creditsGranted: 0, flags: 0, remainingDataLength: 7 }, new Uint8Array([1, 2, 3]));
    expect(d.length).toBe(27);
    expect(decodeDataTransfer(d)).toEqual({ creditsRequested: 10, creditsGranted: 0, flags: 0, reserved: 0, remainingDataLength: 7, dataOffset: 24, dataLength: 3 });
  });
  it('a buffer descriptor V1 is offset (8), token (4), length (4)', () => {
    const b = encodeBufferDescriptorV1({ offset: 0x1122334455667788n, token: 0xa5000123, length: 1 << 20 });
    expect(toHex(b)).toBe('8877665544332211' + '230100a5' + '00001000');
    expect(decodeBufferDescriptorV1(b)).toEqual({ offset: 0x1122334455667788n, token: 0xa5000123, length: 1 << 20 });
  });
});

const LINUX_SIZES: NegotiatedSizes = {
  maxSendSize: 1364, maxReceiveSize: 1364, maxFragmentedSendSize: 173910, maxFragmentedRecvSize: 173910,
  maxReadWriteSize: 8 << 20, sendCredits: 10, receiveCreditTarget: 10,
};
const conn = (over: Partial<NegotiatedSizes> = {}, profile = PROFILES.spec, posted = 10) =>
  new SmbdConnection(profile, { ...LINUX_CONFIG, receiveCreditMax: 16, sendCreditTarget: 10 }, { ...LINUX_SIZES, ...over }, posted);
const sends = (a: Action[]) => a.filter((x): x is Extract<Action, { kind: 'send' }> => x.kind === 'send');
const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff);

describe('fragmentation and reassembly', () => {
  it('exactly MaxSendSize - 24 (1340) bytes: one message, RemainingDataLength 0, 1364 bytes long', () => {
    const s = sends(conn().send(bytes(1340)));
    expect(s.map((x) => [x.bytes.length, x.header.dataLength, x.header.remainingDataLength])).toEqual([[1364, 1340, 0]]);
  });
  it('one byte over: two fragments, 1340 then 1, RemainingDataLength 1 then 0', () => {
    const s = sends(conn().send(bytes(1341)));
    expect(s.map((x) => [x.header.dataLength, x.header.remainingDataLength])).toEqual([[1340, 1], [1, 0]]);
  });
  it('larger than MaxFragmentedSendSize fails locally (3.1.4.2); exactly the size is sent', () => {
    expect(() => conn().send(bytes(173911))).toThrow(/3\.1\.4\.2/);
    const c = conn({ sendCredits: 200 });
    expect(sends(c.send(bytes(173910))).length).toBe(Math.ceil(173910 / 1340));
  });
  it('the receiver reassembles the fragments into the message, with the RFC1002 length of the first fragment', () => {
    const a = conn(), b = conn();
    const msg = bytes(4000);
    const out = sends(a.send(msg)).flatMap((s) => b.onReceive(s.bytes));
    const d = out.filter((x) => x.kind === 'deliver');
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ fragments: 3, rfc1002Length: 4000 });
    expect(Buffer.from((d[0] as { message: Uint8Array }).message).equals(Buffer.from(msg))).toBe(true);
  });
});

describe('3.1.5.8: receive checks terminate the connection', () => {
  const ok = encodeDataTransfer({ creditsRequested: 10, creditsGranted: 1, flags: 0, remainingDataLength: 0 }, bytes(16));
  const mutate = (f: (v: DataView) => void) => { const b = ok.slice(); f(new DataView(b.buffer)); return b; };
  it.each([
    ['recv.length', ok.subarray(0, 19)],
    ['recv.credits-requested', mutate((v) => v.setUint16(0, 0, true))],
    ['recv.data-offset-aligned', mutate((v) => v.setUint32(12, 28, true))],
    ['recv.data-in-message', mutate((v) => v.setUint32(16, 17, true))],
    ['recv.max-fragmented', mutate((v) => v.setUint32(8, 173910 - 15, true))],
  ])('%s', (rule, msg) => {
    const c = conn();
    expect(c.onReceive(msg)).toEqual([expect.objectContaining({ kind: 'disconnect', rule })]);
    expect(c.view().state).toBe('disconnected');
    expect(c.send(bytes(10))).toEqual([]);
  });
  it('DataLength + RemainingDataLength exactly MaxFragmentedRecvSize is accepted', () => {
    const c = conn();
    const m = mutate((v) => v.setUint32(8, 173910 - 16, true));
    expect(c.onReceive(m).some((x) => x.kind === 'disconnect')).toBe(false);
  });
});

describe('credits (3.1.5.1, 3.1.5.9)', () => {
  it('each send spends one credit and asks for SendCreditTarget; the queue stops at 0 credits', () => {
    const c = conn({ sendCredits: 3 });
    const s = sends(c.send(bytes(1340 * 5)));
    expect(s.length).toBe(3);
    expect(s.every((x) => x.header.creditsRequested === 10)).toBe(true);
    expect(c.view()).toMatchObject({ sendCredits: 0, sendQueue: 2, blocked: 'no-send-credits' });
  });
  it('the last credit goes only with a grant: receives are posted for it (spec), never with the bug profile', () => {
    // all 10 receives posted, the peer asked for 10: nothing to grant until the last credit
    const spec = conn({ sendCredits: 2 }, PROFILES.spec, 10);
    const a = spec.send(bytes(1340 * 3));
    expect(sends(a).map((x) => x.header.creditsGranted)).toEqual([0, 1]);
    expect(a).toContainEqual({ kind: 'post-recv', count: 1 });
    const bug = conn({ sendCredits: 2 }, PROFILES['last-credit-bug'], 10);
    expect(sends(bug.send(bytes(1340 * 3))).map((x) => x.header.creditsGranted)).toEqual([0, 0]);
  });
  it('when no receive can be posted (ReceiveCreditMax reached), the spec peer holds its last credit', () => {
    const c = new SmbdConnection(PROFILES.spec, { ...LINUX_CONFIG, receiveCreditMax: 4, sendCreditTarget: 4 }, { ...LINUX_SIZES, sendCredits: 2, receiveCreditTarget: 4 }, 4);
    expect(sends(c.send(bytes(1340 * 3))).length).toBe(1);
    expect(c.view()).toMatchObject({ sendCredits: 1, blocked: 'last-credit-rule', lastCreditHolds: 1 });
  });
  it('a received message updates ReceiveCreditTarget, adds its grant and restarts the queue', () => {
    const c = conn({ sendCredits: 0 });
    expect(sends(c.send(bytes(10)))).toHaveLength(0);
    const out = c.onReceive(encodeDataTransfer({ creditsRequested: 12, creditsGranted: 2, flags: 0, remainingDataLength: 0 }));
    // 9 receives left, the peer now wants 12: three more posted and granted with the message
    expect(sends(out).map((x) => x.header.creditsGranted)).toEqual([3]);
    expect(out).toContainEqual({ kind: 'post-recv', count: 3 });
    expect(c.view()).toMatchObject({ receiveCreditTarget: 12, sendCredits: 1, receiveCredits: 12 });
  });
  it('with an empty queue and the peer low on credits, the reposted receives go at once in a credit-only message', () => {
    const c = conn({ sendCredits: 5 }, PROFILES.spec, 5);
    const out = c.onReceive(encodeDataTransfer({ creditsRequested: 10, creditsGranted: 0, flags: 0, remainingDataLength: 0 }));
    expect(out[0]).toEqual({ kind: 'post-recv', count: 6 });
    expect(sends(out).map((x) => [x.bytes.length, x.header.creditsGranted])).toEqual([[20, 6]]);
  });
  it('one receive used of ten: the receive is reposted but its credit waits for the next message (no credit ping-pong)', () => {
    const c = conn({ sendCredits: 5 });
    const out = c.onReceive(encodeDataTransfer({ creditsRequested: 10, creditsGranted: 0, flags: 0, remainingDataLength: 0 }));
    expect(out).toEqual([{ kind: 'post-recv', count: 1 }]);
    expect(c.view().pendingGrant).toBe(1);
    expect(sends(c.send(bytes(8))).map((x) => x.header.creditsGranted)).toEqual([1]);
  });
});

describe('keepalive (3.1.2.2, 3.1.5.1 step 6)', () => {
  const S = 1_000_000_000;
  it('idle 120 s: PENDING, an empty message with RESPONSE_REQUESTED goes out, SENT; a message back returns to NONE', () => {
    const c = conn();
    expect(c.tick(119 * S)).toEqual([]);
    const out = sends(c.tick(120 * S));
    expect(out.map((x) => [x.bytes.length, x.header.flags])).toEqual([[20, 1]]);
    expect(c.view()).toMatchObject({ keepalive: 'SENT', keepaliveDeadlineNs: 125 * S });
    c.onReceive(encodeDataTransfer({ creditsRequested: 10, creditsGranted: 1, flags: 0, remainingDataLength: 0 }), 121 * S);
    expect(c.view()).toMatchObject({ keepalive: 'NONE', keepaliveDeadlineNs: null, idleDeadlineNs: 241 * S });
  });
  it('no answer within 5 s: disconnect (keepalive.timeout); 1 ns earlier it still waits', () => {
    const c = conn();
    c.tick(120 * S);
    expect(c.tick(125 * S - 1)).toEqual([]);
    expect(c.tick(125 * S)).toEqual([expect.objectContaining({ kind: 'disconnect', rule: 'keepalive.timeout' })]);
  });
  it('a message with RESPONSE_REQUESTED is answered at once, even with nothing to send', () => {
    const c = conn();
    const out = sends(c.onReceive(encodeDataTransfer({ creditsRequested: 10, creditsGranted: 0, flags: 1, remainingDataLength: 0 })));
    expect(out).toHaveLength(1);
    expect(out[0]!.header.flags).toBe(0);
  });
});
