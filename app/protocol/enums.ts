// rdma-core names and numeric values (infiniband/verbs.h), shared by host, renderer, scenarios and exported C.
// REG_MR and RDMA_READ_WITH_INV are kernel-only (include/rdma/ib_verbs.h: IB_WR_REG_MR = 0x20, IB_WC_REG_MR = 8;
// IB_WR_RDMA_READ_WITH_INV = 11, iWARP only, no IBV_WR_ name in rdma-core).
// The device defines each of these once in native/include/vl (types.h, session.h, names.h); tables.test.ts checks
// that every table here says the same, name for name and value for value (native/tools/vl_tables.cpp prints them).

function table<const T extends Record<string, number>>(t: T) {
  const byValue = new Map<number, keyof T & string>();
  for (const [k, v] of Object.entries(t)) if (!byValue.has(v)) byValue.set(v, k as keyof T & string);
  return {
    values: t,
    names: Object.keys(t) as [keyof T & string, ...(keyof T & string)[]],
    name: (v: number): string => byValue.get(v) ?? `UNKNOWN(${v})`,
  };
}

export const WcStatus = table({
  IBV_WC_SUCCESS: 0, IBV_WC_LOC_LEN_ERR: 1, IBV_WC_LOC_QP_OP_ERR: 2, IBV_WC_LOC_EEC_OP_ERR: 3,
  IBV_WC_LOC_PROT_ERR: 4, IBV_WC_WR_FLUSH_ERR: 5, IBV_WC_MW_BIND_ERR: 6, IBV_WC_BAD_RESP_ERR: 7,
  IBV_WC_LOC_ACCESS_ERR: 8, IBV_WC_REM_INV_REQ_ERR: 9, IBV_WC_REM_ACCESS_ERR: 10, IBV_WC_REM_OP_ERR: 11,
  IBV_WC_RETRY_EXC_ERR: 12, IBV_WC_RNR_RETRY_EXC_ERR: 13, IBV_WC_LOC_RDD_VIOL_ERR: 14,
  IBV_WC_REM_INV_RD_REQ_ERR: 15, IBV_WC_REM_ABORT_ERR: 16, IBV_WC_INV_EECN_ERR: 17,
  IBV_WC_INV_EEC_STATE_ERR: 18, IBV_WC_FATAL_ERR: 19, IBV_WC_RESP_TIMEOUT_ERR: 20, IBV_WC_GENERAL_ERR: 21,
});

export const WcOpcode = table({
  IBV_WC_SEND: 0, IBV_WC_RDMA_WRITE: 1, IBV_WC_RDMA_READ: 2, IBV_WC_COMP_SWAP: 3, IBV_WC_FETCH_ADD: 4,
  IBV_WC_BIND_MW: 5, IBV_WC_LOCAL_INV: 6, IB_WC_REG_MR: 8, IBV_WC_RECV: 128, IBV_WC_RECV_RDMA_WITH_IMM: 129,
  IBV_WC_DRIVER1: 135,
});

export const WrOpcode = table({
  IBV_WR_RDMA_WRITE: 0, IBV_WR_RDMA_WRITE_WITH_IMM: 1, IBV_WR_SEND: 2, IBV_WR_SEND_WITH_IMM: 3,
  IBV_WR_RDMA_READ: 4, IBV_WR_ATOMIC_CMP_AND_SWP: 5, IBV_WR_ATOMIC_FETCH_AND_ADD: 6, IBV_WR_LOCAL_INV: 7,
  IBV_WR_BIND_MW: 8, IBV_WR_SEND_WITH_INV: 9, IB_WR_RDMA_READ_WITH_INV: 11, IB_WR_REG_MR: 0x20,
});

export const WcFlag = table({ IBV_WC_GRH: 1, IBV_WC_WITH_IMM: 2, IBV_WC_IP_CSUM_OK: 4, IBV_WC_WITH_INV: 8 });

export const SendFlag = table({ IBV_SEND_FENCE: 1, IBV_SEND_SIGNALED: 2, IBV_SEND_SOLICITED: 4, IBV_SEND_INLINE: 8 });

export const Access = table({
  IBV_ACCESS_LOCAL_WRITE: 1, IBV_ACCESS_REMOTE_WRITE: 2, IBV_ACCESS_REMOTE_READ: 4, IBV_ACCESS_REMOTE_ATOMIC: 8,
  IBV_ACCESS_MW_BIND: 16, IBV_ACCESS_ZERO_BASED: 32,
});

export const QpState = table({
  IBV_QPS_RESET: 0, IBV_QPS_INIT: 1, IBV_QPS_RTR: 2, IBV_QPS_RTS: 3, IBV_QPS_SQD: 4, IBV_QPS_SQE: 5, IBV_QPS_ERR: 6,
});

export const QpType = table({ IBV_QPT_RC: 2, IBV_QPT_UC: 3, IBV_QPT_UD: 4 });

export const QpAttrMask = table({
  IBV_QP_STATE: 1 << 0, IBV_QP_CUR_STATE: 1 << 1, IBV_QP_EN_SQD_ASYNC_NOTIFY: 1 << 2, IBV_QP_ACCESS_FLAGS: 1 << 3,
  IBV_QP_PKEY_INDEX: 1 << 4, IBV_QP_PORT: 1 << 5, IBV_QP_QKEY: 1 << 6, IBV_QP_AV: 1 << 7, IBV_QP_PATH_MTU: 1 << 8,
  IBV_QP_TIMEOUT: 1 << 9, IBV_QP_RETRY_CNT: 1 << 10, IBV_QP_RNR_RETRY: 1 << 11, IBV_QP_RQ_PSN: 1 << 12,
  IBV_QP_MAX_QP_RD_ATOMIC: 1 << 13, IBV_QP_ALT_PATH: 1 << 14, IBV_QP_MIN_RNR_TIMER: 1 << 15,
  IBV_QP_SQ_PSN: 1 << 16, IBV_QP_MAX_DEST_RD_ATOMIC: 1 << 17, IBV_QP_PATH_MIG_STATE: 1 << 18, IBV_QP_CAP: 1 << 19,
  IBV_QP_DEST_QPN: 1 << 20,
});

export const EventType = table({
  IBV_EVENT_CQ_ERR: 0, IBV_EVENT_QP_FATAL: 1, IBV_EVENT_QP_REQ_ERR: 2, IBV_EVENT_QP_ACCESS_ERR: 3,
  IBV_EVENT_COMM_EST: 4, IBV_EVENT_SQ_DRAINED: 5, IBV_EVENT_PATH_MIG: 6, IBV_EVENT_PATH_MIG_ERR: 7,
  IBV_EVENT_DEVICE_FATAL: 8, IBV_EVENT_PORT_ACTIVE: 9, IBV_EVENT_PORT_ERR: 10, IBV_EVENT_SRQ_ERR: 14,
  IBV_EVENT_SRQ_LIMIT_REACHED: 15, IBV_EVENT_QP_LAST_WQE_REACHED: 16,
});

export const MwType = table({ IBV_MW_TYPE_1: 1, IBV_MW_TYPE_2: 2 });

export const Mtu = table({ IBV_MTU_256: 1, IBV_MTU_512: 2, IBV_MTU_1024: 3, IBV_MTU_2048: 4, IBV_MTU_4096: 5 });

export const DeviceCap = table({
  IBV_DEVICE_RESIZE_MAX_WR: 1, IBV_DEVICE_BAD_PKEY_CNTR: 1 << 1, IBV_DEVICE_BAD_QKEY_CNTR: 1 << 2,
  IBV_DEVICE_RAW_MULTI: 1 << 3, IBV_DEVICE_AUTO_PATH_MIG: 1 << 4, IBV_DEVICE_CHANGE_PHY_PORT: 1 << 5,
  IBV_DEVICE_UD_AV_PORT_ENFORCE: 1 << 6, IBV_DEVICE_CURR_QP_STATE_MOD: 1 << 7, IBV_DEVICE_SHUTDOWN_PORT: 1 << 8,
  IBV_DEVICE_INIT_TYPE: 1 << 9, IBV_DEVICE_PORT_ACTIVE_EVENT: 1 << 10, IBV_DEVICE_SYS_IMAGE_GUID: 1 << 11,
  IBV_DEVICE_RC_RNR_NAK_GEN: 1 << 12, IBV_DEVICE_SRQ_RESIZE: 1 << 13, IBV_DEVICE_N_NOTIFY_CQ: 1 << 14,
  IBV_DEVICE_MEM_WINDOW: 1 << 17, IBV_DEVICE_UD_IP_CSUM: 1 << 18, IBV_DEVICE_XRC: 1 << 20,
  IBV_DEVICE_MEM_MGT_EXTENSIONS: 1 << 21, IBV_DEVICE_MEM_WINDOW_TYPE_2A: 1 << 23,
  IBV_DEVICE_MEM_WINDOW_TYPE_2B: 1 << 24, IBV_DEVICE_RC_IP_CSUM: 1 << 25, IBV_DEVICE_RAW_IP_CSUM: 1 << 26,
  IBV_DEVICE_MANAGED_FLOW_STEERING: 1 << 29,
});

export const AtomicCap = table({ IBV_ATOMIC_NONE: 0, IBV_ATOMIC_HCA: 1, IBV_ATOMIC_GLOB: 2 });

// ---- the device's own enums (native/include/vl/session.h), carried by events

/** DeviceEvent.keyState of mr / mw life-cycle events: the key's state after the event (rxe_mr_state / rxe_mw_state). */
export const KeyState = table({ invalid: 0, free: 1, valid: 2 });
/** DeviceEvent.change of ObjectModified: what modified the object. */
export const Change = table({
  REREG: 0, MAP_MR_SG: 1, REG_MR: 2, LOCAL_INV: 3, REMOTE_INV: 4, BIND: 5, QP_DESTROYED: 6, MODIFY_QP: 7, MODIFY_SRQ: 8,
  NET_ATTACH: 9, UNBIND: 10,
});
/** `a` of Timer events. */
export const TimerReason = table({ ACK_TIMEOUT: 0, RNR_WAIT: 1, RNR_EXPIRED: 2, RETRANSMIT: 3 });
/** `a` of Fault events. */
export const FaultKind = table({ LOSS: 0, DUPLICATE: 1, REORDER: 2, DELAY: 3 });
/** `a` of Offload events: the NVMe-oF target-offload engine's step (native/include/vl/nvmf.h vl::NvmfStep; modelled). */
export const NvmfStep = table({
  RECV: 0, PARSE: 1, TO_SOFTWARE: 2, STAGING_ALLOC: 3, STAGING_WAIT: 4, RDMA_READ: 5, RDMA_READ_DONE: 6, ICD_COPY: 7,
  SQE_WRITE: 8, SQ_DOORBELL: 9, CQE: 10, CQ_DOORBELL: 11, RDMA_WRITE: 12, SEND_RESPONSE: 13, DONE: 14,
  BEFORE_CONNECT: 15, RDMA_ERROR: 16, BACKEND_TIMEOUT: 17, BACKEND_PCI_ERR: 18, UNSUPPORTED_OP: 19,
});
/** `c` of Offload TO_SOFTWARE events: why the device left the capsule to software (vl::NvmfPass). */
export const NvmfPass = table({
  NOT_ENABLED: 0, ADMIN_OR_FABRICS: 1, OP_NOT_OFFLOADED: 2, UNKNOWN_NSID: 3, TOO_LARGE: 4, SGL_UNSUPPORTED: 5,
  BACKEND_DOWN: 6, MALFORMED: 7,
});

// ---- the connection manager (native/include/vl/cm.h; docs/cm.md)
/** `b` of CmMad events: what happened to the MAD (vl::CmMadDir). */
export const CmMadDir = table({ SENT: 0, RECEIVED: 1, DROPPED: 2, RESENT: 3 });
/** `a` / `b` of CmState events: a CM ID's IBA 12.9 state (enum ib_cm_state, include/rdma/ib_cm.h). */
export const CmState = table({
  IB_CM_IDLE: 0, IB_CM_LISTEN: 1, IB_CM_REQ_SENT: 2, IB_CM_REQ_RCVD: 3, IB_CM_MRA_REQ_SENT: 4, IB_CM_MRA_REQ_RCVD: 5,
  IB_CM_REP_SENT: 6, IB_CM_REP_RCVD: 7, IB_CM_MRA_REP_SENT: 8, IB_CM_MRA_REP_RCVD: 9, IB_CM_ESTABLISHED: 10,
  IB_CM_DREQ_SENT: 11, IB_CM_DREQ_RCVD: 12, IB_CM_TIMEWAIT: 13, IB_CM_SIDR_REQ_SENT: 14, IB_CM_SIDR_REQ_RCVD: 15,
});
/** The CM's events as rdma_get_cm_event returns them (enum rdma_cm_event_type, rdma/rdma_cma.h). */
export const CmEvent = table({
  RDMA_CM_EVENT_ADDR_RESOLVED: 0, RDMA_CM_EVENT_ADDR_ERROR: 1, RDMA_CM_EVENT_ROUTE_RESOLVED: 2,
  RDMA_CM_EVENT_ROUTE_ERROR: 3, RDMA_CM_EVENT_CONNECT_REQUEST: 4, RDMA_CM_EVENT_CONNECT_RESPONSE: 5,
  RDMA_CM_EVENT_CONNECT_ERROR: 6, RDMA_CM_EVENT_UNREACHABLE: 7, RDMA_CM_EVENT_REJECTED: 8,
  RDMA_CM_EVENT_ESTABLISHED: 9, RDMA_CM_EVENT_DISCONNECTED: 10, RDMA_CM_EVENT_DEVICE_REMOVAL: 11,
  RDMA_CM_EVENT_MULTICAST_JOIN: 12, RDMA_CM_EVENT_MULTICAST_ERROR: 13, RDMA_CM_EVENT_ADDR_CHANGE: 14,
  RDMA_CM_EVENT_TIMEWAIT_EXIT: 15,
});
/** `a` of CmMad events: the CM message's attribute ID (IBA 12.6 Table 104). */
export const CmAttr = table({
  REQ: 0x10, MRA: 0x11, REJ: 0x12, REP: 0x13, RTU: 0x14, DREQ: 0x15, DREP: 0x16, SIDR_REQ: 0x17, SIDR_REP: 0x18,
  LAP: 0x19, APR: 0x1a,
});

/** OR together a list of flag names from a table. */
export function flagsOf<T extends Record<string, number>>(t: { values: T }, names: readonly (keyof T)[]): number {
  let v = 0;
  for (const n of names) v |= t.values[n] as number;
  return v >>> 0;
}
/** Split a bit mask into the names of a table (unknown bits as hex). */
export function namesOf(t: { values: Record<string, number> }, mask: number): string[] {
  const out: string[] = [];
  let rest = mask >>> 0;
  for (const [k, v] of Object.entries(t.values)) if (v && (mask & v) === v) { out.push(k); rest &= ~v >>> 0; }
  if (rest) out.push(`0x${rest.toString(16)}`);
  return out;
}
