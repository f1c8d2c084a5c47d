// SMB Direct messages ([MS-SMBD] 2.2; the byte layouts are labs/smbd/pdu.ts's, the lab that speaks the protocol):
// the negotiate request (20 bytes), the negotiate response (32 bytes) and the data transfer message (a 20-byte
// header, 24 with data), all carried by the first packet of an RDMA SEND (or SEND with Invalidate).
//
// What it claims without being told: a 20-byte payload whose version range is 0x0100..0x0100 (a negotiate request);
// a 32-byte payload with MinVersion = MaxVersion = 0x0100 and NegotiatedVersion 0x0100 or 0 (a response; 0 with
// STATUS_NOT_SUPPORTED); a data transfer header with CreditsRequested > 0, Flags 0 or RESPONSE_REQUESTED, Reserved 0,
// and DataOffset 0 with DataLength 0 in a 20-byte message, or DataOffset 24 with DataOffset + DataLength the
// message length (whole in this packet, or more packets to come). With input.protocol 'smb-direct' (the lab's
// agent knows the connection) a shorter header check suffices. Wireshark's smb_direct dissector likewise
// needs either the RDMA CM exchange or its heuristic on InfiniBand payloads.
import { startsSend } from '../../app/protocol/bth.ts';
import type { PayloadDecoder, PayloadInput } from '../../app/protocol/payload.ts';
import {
  DATA_MIN_HDR_SIZE, DATA_OFFSET, FLAG_RESPONSE_REQUESTED, NEGOTIATE_REQUEST_SIZE, NEGOTIATE_RESPONSE_SIZE, SMBDIRECT_V1,
  decodeDataTransfer, decodeNegotiateRequest, decodeNegotiateResponse,
} from './pdu.ts';

function decode(input: PayloadInput) {
  const b = input.payload;
  if (!startsSend(input.opcode)) return undefined;
  const told = input.protocol === 'smb-direct';
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length === NEGOTIATE_REQUEST_SIZE && v.getUint16(0, true) <= SMBDIRECT_V1 && v.getUint16(2, true) >= SMBDIRECT_V1 && v.getUint16(2, true) < 0x0200) {
    const r = decodeNegotiateRequest(b);
    return {
      summary: `SMB Direct Negotiate Request credits ${r.creditsRequested} send ${r.preferredSendSize} recv ${r.maxReceiveSize} frag ${r.maxFragmentedSize}`,
      fields: { 'smb-direct': { message: 'negotiate-request', ...r } },
    };
  }
  if (b.length === NEGOTIATE_RESPONSE_SIZE && v.getUint16(0, true) === SMBDIRECT_V1 && v.getUint16(2, true) === SMBDIRECT_V1
      && (v.getUint16(4, true) === SMBDIRECT_V1 || v.getUint16(4, true) === 0)) {
    const r = decodeNegotiateResponse(b);
    return {
      summary: `SMB Direct Negotiate Response status 0x${r.status.toString(16).padStart(8, '0')} granted ${r.creditsGranted} requested ${r.creditsRequested} rw ${r.maxReadWriteSize}`,
      fields: { 'smb-direct': { message: 'negotiate-response', ...r } },
    };
  }
  if (b.length < DATA_MIN_HDR_SIZE) return undefined;
  const h = decodeDataTransfer(b);
  if (h.creditsRequested === 0 || (h.flags & ~FLAG_RESPONSE_REQUESTED) !== 0 || h.reserved !== 0) return undefined;
  const empty = h.dataOffset === 0 && h.dataLength === 0 && (told || b.length === DATA_MIN_HDR_SIZE);
  const withData = h.dataOffset === DATA_OFFSET && h.dataLength > 0 && (told || DATA_OFFSET + h.dataLength >= b.length);
  if (!empty && !withData) return undefined;
  const parts = [`SMB Direct Data credits requested ${h.creditsRequested} granted ${h.creditsGranted}`];
  if (h.flags & FLAG_RESPONSE_REQUESTED) parts.push('RESPONSE_REQUESTED');
  parts.push(h.dataLength ? `data ${h.dataLength} remaining ${h.remainingDataLength}` : 'no data');
  return { summary: parts.join(' '), fields: { 'smb-direct': { message: 'data-transfer', ...h } } };
}

export const smbDirectDecoder: PayloadDecoder = {
  id: 'smb-direct',
  title: 'SMB Direct (MS-SMBD 2.2: negotiate request / response, data transfer)',
  decode,
};
