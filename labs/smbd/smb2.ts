// The SMB2 messages lab 5 moves data with ([MS-SMB2] 2.2.1.2 sync header, 2.2.19 READ request, 2.2.20 READ
// response, 2.2.21 WRITE request, 2.2.22 WRITE response), byte exact and little-endian, with the channel fields that
// carry SMB Direct buffer descriptors ([MS-SMBD] 2.2.3.1): in a READ the server RDMA WRITEs into the client's
// buffer, in a WRITE it RDMA READs from it. Only what the lab uses: one descriptor per request, no signing.
import { BUFFER_DESCRIPTOR_V1_SIZE, decodeBufferDescriptorV1, encodeBufferDescriptorV1 } from './pdu.ts';
import type { BufferDescriptorV1 } from './pdu.ts';

export const SMB2_HEADER_SIZE = 64;
export const SMB2_READ = 0x0008;
export const SMB2_WRITE = 0x0009;
export const SMB2_FLAGS_SERVER_TO_REDIR = 0x00000001;
/** where the channel info starts: after the header (64) and the fixed part of READ/WRITE requests (48) */
export const CHANNEL_INFO_OFFSET = 0x70;

export interface Smb2Io {
  command: typeof SMB2_READ | typeof SMB2_WRITE;
  messageId: bigint; sessionId: bigint; treeId: number;
  fileOffset: bigint; length: number; channel: number; descriptor: BufferDescriptorV1;
}
export interface Smb2IoResponse { command: number; messageId: bigint; status: number; count: number }

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

function header(b: Uint8Array, command: number, messageId: bigint, sessionId: bigint, treeId: number, response: boolean, status = 0): void {
  b.set([0xfe, 0x53, 0x4d, 0x42], 0);
  const v = view(b);
  v.setUint16(4, SMB2_HEADER_SIZE, true); v.setUint16(6, 1, true); v.setUint32(8, status >>> 0, true);
  v.setUint16(12, command, true); v.setUint16(14, 1, true); v.setUint32(16, response ? SMB2_FLAGS_SERVER_TO_REDIR : 0, true);
  v.setBigUint64(24, messageId, true); v.setUint32(32, 0xfeff, true); v.setUint32(36, treeId, true); v.setBigUint64(40, sessionId, true);
}

/** A READ or WRITE request whose data goes by RDMA through one buffer descriptor V1. */
export function encodeIoRequest(r: Smb2Io): Uint8Array {
  const b = new Uint8Array(CHANNEL_INFO_OFFSET + BUFFER_DESCRIPTOR_V1_SIZE), v = view(b);
  header(b, r.command, r.messageId, r.sessionId, r.treeId, false);
  const o = SMB2_HEADER_SIZE;
  v.setUint16(o, 49, true);                                           // StructureSize
  if (r.command === SMB2_READ) {
    v.setUint8(o + 2, 0x50);                                          // Padding: where the response's data would be
    v.setUint32(o + 4, r.length, true); v.setBigUint64(o + 8, r.fileOffset, true);
    // FileId (16 bytes at o+16) stays 0: the lab has one open
    v.setUint32(o + 32, 1, true);                                     // MinimumCount
    v.setUint32(o + 36, r.channel, true); v.setUint32(o + 40, 0, true);
    v.setUint16(o + 44, CHANNEL_INFO_OFFSET, true); v.setUint16(o + 46, BUFFER_DESCRIPTOR_V1_SIZE, true);
  } else {
    v.setUint16(o + 2, CHANNEL_INFO_OFFSET, true);                    // DataOffset
    v.setUint32(o + 4, 0, true);                                      // Length: 0, the data goes by RDMA
    v.setBigUint64(o + 8, r.fileOffset, true);
    v.setUint32(o + 32, r.channel, true); v.setUint32(o + 36, r.length, true);   // Channel, RemainingBytes
    v.setUint16(o + 40, CHANNEL_INFO_OFFSET, true); v.setUint16(o + 42, BUFFER_DESCRIPTOR_V1_SIZE, true);
  }
  b.set(encodeBufferDescriptorV1(r.descriptor), CHANNEL_INFO_OFFSET);
  return b;
}

export class Smb2Error extends Error {}

export function decodeIoRequest(b: Uint8Array): Smb2Io {
  if (b.length < SMB2_HEADER_SIZE + 48 || b[0] !== 0xfe || b[1] !== 0x53 || b[2] !== 0x4d || b[3] !== 0x42) throw new Smb2Error('not an SMB2 request');
  const v = view(b), o = SMB2_HEADER_SIZE;
  const command = v.getUint16(12, true);
  if (command !== SMB2_READ && command !== SMB2_WRITE) throw new Smb2Error(`SMB2 command 0x${command.toString(16)}: not READ or WRITE`);
  const read = command === SMB2_READ;
  const infoOff = v.getUint16(o + (read ? 44 : 40), true), infoLen = v.getUint16(o + (read ? 46 : 42), true);
  // ksmbd validates ChannelInfoOffset / Length before using them (2022 fix): so does the lab
  if (infoLen < BUFFER_DESCRIPTOR_V1_SIZE || infoOff + infoLen > b.length) throw new Smb2Error(`channel info ${infoOff}+${infoLen} outside the ${b.length}-byte message`);
  return {
    command, messageId: v.getBigUint64(24, true), sessionId: v.getBigUint64(40, true), treeId: v.getUint32(36, true),
    fileOffset: v.getBigUint64(o + 8, true), length: read ? v.getUint32(o + 4, true) : v.getUint32(o + 36, true),
    channel: v.getUint32(o + (read ? 36 : 32), true), descriptor: decodeBufferDescriptorV1(b.subarray(infoOff, infoOff + BUFFER_DESCRIPTOR_V1_SIZE)),
  };
}

/** READ response (DataRemaining = bytes written into the client's buffer) or WRITE response (Count = bytes read). */
export function encodeIoResponse(r: Smb2IoResponse, sessionId: bigint, treeId: number): Uint8Array {
  const b = new Uint8Array(SMB2_HEADER_SIZE + 16), v = view(b);
  header(b, r.command, r.messageId, sessionId, treeId, true, r.status);
  const o = SMB2_HEADER_SIZE;
  v.setUint16(o, 17, true);
  // a READ whose data went by RDMA: DataLength 0, DataRemaining = the bytes written into the client's buffer
  // (ksmbd smb2_read after smb2_read_rdma_channel); a WRITE: Count
  if (r.command === SMB2_READ) { v.setUint8(o + 2, 0x50); v.setUint32(o + 4, 0, true); v.setUint32(o + 8, r.count, true); }
  else v.setUint32(o + 4, r.count, true);
  return b;
}
export function decodeIoResponse(b: Uint8Array): Smb2IoResponse {
  if (b.length < SMB2_HEADER_SIZE + 8) throw new Smb2Error('SMB2 response too short');
  const v = view(b);
  const command = v.getUint16(12, true);
  const count = v.getUint32(SMB2_HEADER_SIZE + (command === SMB2_READ ? 8 : 4), true);
  return { command, messageId: v.getBigUint64(24, true), status: v.getUint32(8, true), count };
}
