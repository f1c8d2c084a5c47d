// The SMB Direct peer profiles the lab switches between: the spec as written ([MS-SMBD] 3.1.5), a ksmbd-like
// peer (Linux fs/smb/server/transport_rdma.c: stricter minimum sizes, version mismatch terminates), and a peer
// with the "last send credit" bug both Linux sides had until 2026 (a message spends the last send credit without
// granting credits back: [MS-SMBD] 3.1.5.1 step 3 not applied). One table, read by the connection machine
// (conn.ts), the negotiation rules (negotiate.ts), the agents and the panel.

export type ProfileId = 'spec' | 'ksmbd' | 'last-credit-bug';

export interface PeerProfile {
  id: ProfileId;
  title: string;
  /** negotiate minimums refused AT the minimum (ksmbd: MaxReceiveSize <= 128, MaxFragmentedSize <= 128 KiB) */
  strictMinimums: boolean;
  /** a request whose version range misses 0x0100: answer STATUS_NOT_SUPPORTED then close (spec 3.1.5.6), or
   *  terminate without an answer (ksmbd's smb_direct_check_recvmsg returns -EOPNOTSUPP) */
  versionMismatch: 'status-not-supported' | 'terminate';
  /** [MS-SMBD] 3.1.5.1 step 3: the last send credit is spent only on a message that grants credits */
  lastCreditRule: boolean;
  source: string;
}

export const PROFILES: Record<ProfileId, PeerProfile> = {
  spec: {
    id: 'spec', title: 'MS-SMBD as written', strictMinimums: false, versionMismatch: 'status-not-supported', lastCreditRule: true,
    source: '[MS-SMBD] 3.1.5.1, 3.1.5.6, 3.1.5.7',
  },
  ksmbd: {
    id: 'ksmbd', title: 'ksmbd-like (strict minimum sizes)', strictMinimums: true, versionMismatch: 'terminate', lastCreditRule: true,
    source: 'Linux fs/smb/server/transport_rdma.c smb_direct_check_recvmsg',
  },
  'last-credit-bug': {
    id: 'last-credit-bug', title: 'last send credit spent without granting (Linux before 2026)', strictMinimums: false,
    versionMismatch: 'status-not-supported', lastCreditRule: false,
    source: 'Linux "smb: client|server: fix last send credit problem causing disconnects" (2026)',
  },
};
export const PROFILE_IDS = Object.keys(PROFILES) as ProfileId[];

/** A peer's own sizes and credit limits ([MS-SMBD] 3.1.1.1 Connection; 2.5 defaults). */
export interface PeerConfig {
  receiveCreditMax: number;
  sendCreditTarget: number;
  maxSendSize: number;
  maxReceiveSize: number;
  maxFragmentedRecvSize: number;
  maxReadWriteSize: number;
  /** 3.1.5.9 leaves WHEN receives are reposted to the implementation: undefined posts up to the target at once;
   *  a number waits until ReceiveCredits has fallen to it (ksmbd recv_done: receive_credits <= recv_credit_max >> 3,
   *  then smb_direct_post_recv_credits) */
  repostAt?: number;
  /** idle connection timer ([MS-SMBD] 3.1.2.2; cifs smbd_keep_alive_interval: 120 s) */
  keepaliveIntervalNs: number;
  /** how long a keepalive waits for any message back (cifs KEEPALIVE_RECV_TIMEOUT: 5 s) */
  keepaliveTimeoutNs: number;
}

const S = 1_000_000_000;
/** ksmbd and cifs.ko today: 255 credits, 1364-byte sends and receives, (255 x 1364) / 2 reassembly, 120 s / 5 s */
export const LINUX_CONFIG: PeerConfig = {
  receiveCreditMax: 255, sendCreditTarget: 255, maxSendSize: 1364, maxReceiveSize: 1364,
  maxFragmentedRecvSize: (255 * 1364) >> 1, maxReadWriteSize: 8 * 1024 * 1024,
  keepaliveIntervalNs: 120 * S, keepaliveTimeoutNs: 5 * S,
};
/** [MS-SMBD] 4.1's example peer: 10 credits, 1 KiB sends and receives, 128 KiB reassembly, 1 MiB read/write */
export const SPEC_EXAMPLE_CONFIG: PeerConfig = {
  receiveCreditMax: 10, sendCreditTarget: 10, maxSendSize: 1024, maxReceiveSize: 1024,
  maxFragmentedRecvSize: 128 * 1024, maxReadWriteSize: 1024 * 1024,
  keepaliveIntervalNs: 120 * S, keepaliveTimeoutNs: 5 * S,
};
