// The SMB Direct payload decoder (labs/smbd/decoder.ts) through the registry: the 4.1 example
// messages, data transfer headers, and payloads it must leave alone.
import { describe, expect, it } from 'vitest';
import { decodePayload } from '../../app/protocol/decoders.ts';
import { encodeDataTransfer, encodeNegotiateRequest, encodeNegotiateResponse, fromHex } from './pdu.ts';
import { negotiateRequestOf } from './negotiate.ts';
import { SPEC_EXAMPLE_CONFIG } from './profiles.ts';

const SEND_ONLY = 0x04, SEND_FIRST = 0x00, RDMA_WRITE_ONLY = 0x0a;
const dec = (payload: Uint8Array, opcode = SEND_ONLY, protocol?: string) => decodePayload({ opcode, destQp: 1, payload, ...(protocol ? { protocol } : {}) });

describe('smb-direct decoder', () => {
  it('negotiate request and response (MS-SMBD 4.1)', () => {
    expect(dec(encodeNegotiateRequest(negotiateRequestOf(SPEC_EXAMPLE_CONFIG)))).toMatchObject({
      protocol: 'smb-direct', summary: 'SMB Direct Negotiate Request credits 10 send 1024 recv 1024 frag 131072',
    });
    const r = dec(encodeNegotiateResponse({ minVersion: 0x100, maxVersion: 0x100, negotiatedVersion: 0x100, reserved: 0, creditsRequested: 10, creditsGranted: 10, status: 0, maxReadWriteSize: 1 << 20, preferredSendSize: 1024, maxReceiveSize: 1024, maxFragmentedSize: 131072 }));
    expect(r).toMatchObject({ protocol: 'smb-direct', fields: { 'smb-direct': { message: 'negotiate-response', creditsGranted: 10, maxReadWriteSize: 1048576 } } });
  });
  it('data transfer: a keepalive, a whole message, the first packet of a multi-packet SEND', () => {
    expect(dec(encodeDataTransfer({ creditsRequested: 255, creditsGranted: 0, flags: 1, remainingDataLength: 0 }))?.summary)
      .toBe('SMB Direct Data credits requested 255 granted 0 RESPONSE_REQUESTED no data');
    expect(dec(encodeDataTransfer({ creditsRequested: 255, creditsGranted: 3, flags: 0, remainingDataLength: 0 }, new Uint8Array(100)))?.summary)
      .toBe('SMB Direct Data credits requested 255 granted 3 data 100 remaining 0');
    const big = encodeDataTransfer({ creditsRequested: 255, creditsGranted: 0, flags: 0, remainingDataLength: 1 }, new Uint8Array(1340));
    expect(dec(big.subarray(0, 1024), SEND_FIRST)?.fields).toMatchObject({ 'smb-direct': { dataLength: 1340, remainingDataLength: 1 } });
  });
  it('leaves alone: RDMA WRITE payloads, CreditsRequested 0, unknown flags, DataOffset not 0/24, random bytes', () => {
    const dt = encodeDataTransfer({ creditsRequested: 10, creditsGranted: 0, flags: 0, remainingDataLength: 0 }, new Uint8Array(8));
    expect(dec(dt, RDMA_WRITE_ONLY)).toBeUndefined();
    const zero = dt.slice(); zero[0] = 0;
    expect(dec(zero)).toBeUndefined();
    const flags = dt.slice(); flags[4] = 2;
    expect(dec(flags)).toBeUndefined();
    const off = dt.slice(); off[12] = 32;
    expect(dec(off)).toBeUndefined();
    expect(dec(fromHex('00112233445566778899aabbccddeeff0011223344556677'))).toBeUndefined();
  });
});
