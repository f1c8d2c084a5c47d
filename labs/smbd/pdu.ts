// SMB Direct messages, byte exact ([MS-SMBD] 2.2; little-endian; Linux fs/smb/common/smbdirect/smbdirect_pdu.h has
// the same layouts): the negotiate request (20 bytes), the negotiate response (32 bytes), the data transfer message
// (a 20-byte header, 24 with its padding when it carries data), and the buffer descriptor V1 (16 bytes) that SMB2
// READ/WRITE carry in their channel info ([MS-SMB2] 2.2.19, 2.2.21; [MS-SMBD] 2.2.3.1). Pure: no device, no Node.
// Every number here is the protocol's; the lab's views, its decoder and its agents read this one table.

/** [MS-SMBD] 2.2.1: the only version, 1.0 (smbdirect_pdu.h SMBDIRECT_V1) */
export const SMBDIRECT_V1 = 0x0100;
export const NEGOTIATE_REQUEST_SIZE = 20;
export const NEGOTIATE_RESPONSE_SIZE = 32;
/** [MS-SMBD] 2.2.3: a data transfer message without data is 20 bytes (SMBDIRECT_DATA_MIN_HDR_SIZE) */
export const DATA_MIN_HDR_SIZE = 0x14;
/** the header padded to 8-byte alignment: the DataOffset of a message with data (SMBDIRECT_DATA_OFFSET) */
export const DATA_OFFSET = 0x18;
/** [MS-SMBD] 2.2.3 Flags: SMB_DIRECT_RESPONSE_REQUESTED (the peer must answer promptly: the keepalive) */
export const FLAG_RESPONSE_REQUESTED = 0x0001;
export const BUFFER_DESCRIPTOR_V1_SIZE = 16;
/** [MS-ERREF] 2.3.1 NTSTATUS values the negotiate response carries */
export const STATUS_SUCCESS = 0x00000000;
export const STATUS_NOT_SUPPORTED = 0xc00000bb;
/** [MS-SMB2] 2.2.19 Channel: where the buffer descriptors of READ/WRITE say the data is */
export const SMB2_CHANNEL = { NONE: 0, RDMA_V1: 1, RDMA_V1_INVALIDATE: 2, RDMA_TRANSFORM: 3 } as const;
export type Smb2ChannelName = keyof typeof SMB2_CHANNEL;
export const SMB2_CHANNEL_NAMES: Record<number, Smb2ChannelName> = { 0: 'NONE', 1: 'RDMA_V1', 2: 'RDMA_V1_INVALIDATE', 3: 'RDMA_TRANSFORM' };

export interface NegotiateRequest {
  minVersion: number; maxVersion: number; reserved: number; creditsRequested: number;
  preferredSendSize: number; maxReceiveSize: number; maxFragmentedSize: number;
}
export interface NegotiateResponse {
  minVersion: number; maxVersion: number; negotiatedVersion: number; reserved: number;
  creditsRequested: number; creditsGranted: number; status: number;
  maxReadWriteSize: number; preferredSendSize: number; maxReceiveSize: number; maxFragmentedSize: number;
}
export interface DataTransfer {
  creditsRequested: number; creditsGranted: number; flags: number; reserved: number;
  remainingDataLength: number; dataOffset: number; dataLength: number;
}
export interface BufferDescriptorV1 { offset: bigint; token: number; length: number }

export class PduError extends Error {}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
function need(b: Uint8Array, n: number, what: string): DataView {
  if (b.length < n) throw new PduError(`${what}: ${b.length} bytes, at least ${n} needed`);
  return view(b);
}

export function encodeNegotiateRequest(r: NegotiateRequest): Uint8Array {
  const b = new Uint8Array(NEGOTIATE_REQUEST_SIZE), v = view(b);
  v.setUint16(0, r.minVersion, true); v.setUint16(2, r.maxVersion, true); v.setUint16(4, r.reserved, true);
  v.setUint16(6, r.creditsRequested, true); v.setUint32(8, r.preferredSendSize, true);
  v.setUint32(12, r.maxReceiveSize, true); v.setUint32(16, r.maxFragmentedSize, true);
  return b;
}
export function decodeNegotiateRequest(b: Uint8Array): NegotiateRequest {
  const v = need(b, NEGOTIATE_REQUEST_SIZE, 'negotiate request');
  return {
    minVersion: v.getUint16(0, true), maxVersion: v.getUint16(2, true), reserved: v.getUint16(4, true),
    creditsRequested: v.getUint16(6, true), preferredSendSize: v.getUint32(8, true),
    maxReceiveSize: v.getUint32(12, true), maxFragmentedSize: v.getUint32(16, true),
  };
}

export function encodeNegotiateResponse(r: NegotiateResponse): Uint8Array {
  const b = new Uint8Array(NEGOTIATE_RESPONSE_SIZE), v = view(b);
  v.setUint16(0, r.minVersion, true); v.setUint16(2, r.maxVersion, true); v.setUint16(4, r.negotiatedVersion, true);
  v.setUint16(6, r.reserved, true); v.setUint16(8, r.creditsRequested, true); v.setUint16(10, r.creditsGranted, true);
  v.setUint32(12, r.status >>> 0, true); v.setUint32(16, r.maxReadWriteSize, true); v.setUint32(20, r.preferredSendSize, true);
  v.setUint32(24, r.maxReceiveSize, true); v.setUint32(28, r.maxFragmentedSize, true);
  return b;
}
export function decodeNegotiateResponse(b: Uint8Array): NegotiateResponse {
  const v = need(b, NEGOTIATE_RESPONSE_SIZE, 'negotiate response');
  return {
    minVersion: v.getUint16(0, true), maxVersion: v.getUint16(2, true), negotiatedVersion: v.getUint16(4, true),
    reserved: v.getUint16(6, true), creditsRequested: v.getUint16(8, true), creditsGranted: v.getUint16(10, true),
    status: v.getUint32(12, true), maxReadWriteSize: v.getUint32(16, true), preferredSendSize: v.getUint32(20, true),
    maxReceiveSize: v.getUint32(24, true), maxFragmentedSize: v.getUint32(28, true),
  };
}

/** A data transfer message: the header, then (when `data` is not empty) 4 bytes of padding and the data at 24. */
export function encodeDataTransfer(h: Omit<DataTransfer, 'dataOffset' | 'dataLength' | 'reserved'>, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const len = data.length ? DATA_OFFSET + data.length : DATA_MIN_HDR_SIZE;
  const b = new Uint8Array(len), v = view(b);
  v.setUint16(0, h.creditsRequested, true); v.setUint16(2, h.creditsGranted, true); v.setUint16(4, h.flags, true);
  v.setUint16(6, 0, true); v.setUint32(8, h.remainingDataLength, true);
  v.setUint32(12, data.length ? DATA_OFFSET : 0, true); v.setUint32(16, data.length, true);
  if (data.length) b.set(data, DATA_OFFSET);
  return b;
}
export function decodeDataTransfer(b: Uint8Array): DataTransfer {
  const v = need(b, DATA_MIN_HDR_SIZE, 'data transfer message');
  return {
    creditsRequested: v.getUint16(0, true), creditsGranted: v.getUint16(2, true), flags: v.getUint16(4, true),
    reserved: v.getUint16(6, true), remainingDataLength: v.getUint32(8, true), dataOffset: v.getUint32(12, true),
    dataLength: v.getUint32(16, true),
  };
}

export function encodeBufferDescriptorV1(d: BufferDescriptorV1): Uint8Array {
  const b = new Uint8Array(BUFFER_DESCRIPTOR_V1_SIZE), v = view(b);
  v.setBigUint64(0, d.offset, true); v.setUint32(8, d.token >>> 0, true); v.setUint32(12, d.length >>> 0, true);
  return b;
}
export function decodeBufferDescriptorV1(b: Uint8Array): BufferDescriptorV1 {
  const v = need(b, BUFFER_DESCRIPTOR_V1_SIZE, 'buffer descriptor V1');
  return { offset: v.getBigUint64(0, true), token: v.getUint32(8, true), length: v.getUint32(12, true) };
}

export const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
export function fromHex(hex: string): Uint8Array {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new PduError('hex: two hex digits per byte');
  const b = new Uint8Array(hex.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(hex.substr(2 * i, 2), 16);
  return b;
}
