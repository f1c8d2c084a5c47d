// Which fields of struct ibv_send_wr each work-request opcode uses, as the post send form lays them out (from the
// opcode table, app/protocol/wr-ops.ts). Layout only: which fields are shown and sent. Whether a value is acceptable is the
// device's to say (ibv_post_send's checks in native/src/core/qp.cpp, their text shown next to the form).
import type { SendWr } from '../../../app/protocol/index.ts';
import { WR_OPS, type WrField } from '../../../app/protocol/wr-ops.ts';

export type { WrField } from '../../../app/protocol/wr-ops.ts';

/** The fields each opcode uses, from the opcode table (app/protocol/wr-ops.ts, checked against the device's). */
export const WR_FIELDS = Object.fromEntries(Object.entries(WR_OPS).map(([op, o]) => [op, o.fields])) as Record<SendWr['opcode'], readonly WrField[]>;

/** The opcodes a UD QP takes (the SEND family, which also names its destination: wr.ud { ah, remote_qpn, remote_qkey }) */
export const UD_OPCODES = (Object.keys(WR_OPS) as SendWr['opcode'][]).filter((op) => WR_OPS[op].qpTypes.includes('IBV_QPT_UD'));

export const hasField = (opcode: string, f: WrField): boolean => (WR_FIELDS[opcode as SendWr['opcode']] ?? []).includes(f);

/** ibv_inc_rkey(): the next key byte for a window or fast-registration MR (libibverbs verbs.h; the 24-bit index stays) */
export const incRkey = (rkey: number): number => ((rkey & 0xffffff00) | ((rkey + 1) & 0xff)) >>> 0;
