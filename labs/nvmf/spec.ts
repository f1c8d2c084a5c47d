// Lab 4's NVMe / NVMe-oF facts as numbers, one table per kind (NVM Express base spec; NVMe-oF 1.1 and its RDMA
// transport binding; Linux include/linux/nvme.h uses the same names and values). The payload decoder
// (labs/nvmf/decoder.ts) names opcodes for people; these tables are what the agents build and check.
// Browser-safe: the panel reads them too.

/** Admin command opcodes (NVMe base spec, "Opcodes for Admin Commands"; nvme.h enum nvme_admin_opcode). */
export const AdminOpc = { GET_LOG_PAGE: 0x02, IDENTIFY: 0x06, SET_FEATURES: 0x09, GET_FEATURES: 0x0a, KEEP_ALIVE: 0x18 } as const;
/** NVM command set opcodes (nvme.h enum nvme_opcode). */
export const IoOpc = { FLUSH: 0x00, WRITE: 0x01, READ: 0x02, WRITE_ZEROES: 0x08, DSM: 0x09 } as const;
/** Fabrics commands: opcode 0x7F, FCTYPE at byte 4 (NVMe-oF "Fabrics Command Type"; nvme.h nvmf_fabrics_type). */
export const FABRICS_OPC = 0x7f;
export const Fctype = { PROPERTY_SET: 0x00, CONNECT: 0x01, PROPERTY_GET: 0x04 } as const;

/** Identify CNS values (CDW10 bits 7:0). */
export const Cns = { NAMESPACE: 0x00, CONTROLLER: 0x01, ACTIVE_NS_LIST: 0x02 } as const;

/** Controller properties (the NVMe register offsets; nvme.h NVME_REG_*). CAP is 8 bytes, the others 4. */
export const Prop = { CAP: 0x00, VS: 0x08, CC: 0x14, CSTS: 0x1c } as const;
export const PROP_NAMES: Record<number, string> = { 0x00: 'CAP', 0x08: 'VS', 0x14: 'CC', 0x1c: 'CSTS' };
/** CC fields: EN bit 0, CSS 6:4, MPS 10:7, AMS 13:11, SHN 15:14, IOSQES 19:16, IOCQES 23:20. */
export const CC = { EN: 1 << 0, SHN_SHIFT: 14, IOSQES_SHIFT: 16, IOCQES_SHIFT: 20 } as const;
/** CSTS fields: RDY bit 0, CFS bit 1, SHST 3:2 (2 = shutdown processing complete). */
export const CSTS = { RDY: 1 << 0, CFS: 1 << 1, SHST_CMPLT: 2 << 2 } as const;

/** Status code types and codes the lab emits (NVMe base spec "Status Code Type" / "Generic Command Status";
 *  NVMe-oF "Connect command specific status"). The CQE status field is SC << 1 | SCT << 9 | DNR << 15. */
export const Sct = { GENERIC: 0, COMMAND_SPECIFIC: 1, MEDIA: 2 } as const;
export const Sc = {
  SUCCESS: 0x00, INVALID_OPCODE: 0x01, INVALID_FIELD: 0x02, DATA_XFER_ERROR: 0x04, INTERNAL: 0x06,
  INVALID_NS: 0x0b, CMD_SEQ_ERROR: 0x0c, SGL_INVALID_DATA: 0x0f, SGL_INVALID_TYPE: 0x11, SGL_INVALID_OFFSET: 0x16,
  LBA_RANGE: 0x80,
  // SCT 1, Fabrics Connect
  CONNECT_INVALID_PARAM: 0x82, CONNECT_INVALID_HOST: 0x84,
} as const;
export const DNR = 1 << 15;
/** The CQE status word of (sct, sc, dnr); phase bit 0 is reserved (0) on fabrics. */
export function statusWord(sct: number, sc: number, dnr = false): number { return ((sc & 0xff) << 1) | ((sct & 7) << 9) | (dnr ? DNR : 0); }

/** SGL descriptor identifiers (byte 15: type 7:4, subtype 3:0) the RDMA transport uses. */
export const SglId = { KEYED_ADDR: 0x40, KEYED_INV: 0x4f, DATA_OFFSET: 0x01 } as const;
/** PSDT 01b in SQE byte 1 bits 7:6: SGL for data (NVMe-oF requires SGLs). */
export const PSDT_SGL = 0x40;

/** Connect data (1024 bytes): HOSTID 0-15, CNTLID 16-17, SUBNQN 256-511, HOSTNQN 512-767 (nvme.h nvmf_connect_data). */
export const ConnectData = { SIZE: 1024, HOSTID: 0, CNTLID: 16, SUBNQN: 256, HOSTNQN: 512, NQN_LEN: 256 } as const;
/** CNTLID 0xFFFF in an admin Connect asks for a dynamic controller. */
export const CNTLID_DYNAMIC = 0xffff;
/** Connect response DW0 on SC 0x82: IPO bits 15:0 (byte offset of the bad field), IATTR bits 23:16 (1 = in the data).
 *  Linux nvmet: IPO_IATTR_CONNECT_DATA(x) = 1 << 16 | offsetof(nvmf_connect_data, x). */
export function ipoIattr(inData: boolean, offset: number): number { return ((inData ? 1 : 0) << 16) | offset; }
/** Connect SQE field offsets (nvme.h nvmf_connect_command): RECFMT 40, QID 42, SQSIZE 44, CATTR 46, KATO 48. */
export const ConnectSqe = { RECFMT: 40, QID: 42, SQSIZE: 44, CATTR: 46, KATO: 48 } as const;

/** Identify Controller offsets used (NVMe base spec "Identify Controller Data Structure"; NVMe-oF bytes 1792+). */
export const IdCtrl = {
  VID: 0, SN: 4, MN: 24, FR: 64, MDTS: 77, CNTLID: 78, VER: 80, KAS: 320, SQES: 512, CQES: 513, MAXCMD: 514, NN: 516,
  SGLS: 536, SUBNQN: 768, IOCCSZ: 1792, IORCSZ: 1796, ICDOFF: 1800, FCATT: 1802, MSDBD: 1803,
} as const;
/** Identify Namespace offsets: NSZE 0, NCAP 8, NUSE 16, NLBAF 25, FLBAS 26, LBAF0 128 (MS 15:0, LBADS 23:16). */
export const IdNs = { NSZE: 0, NCAP: 8, NUSE: 16, NLBAF: 25, FLBAS: 26, LBAF0: 128 } as const;

/** NVMe/RDMA CM private data (NVMe-oF RDMA transport binding; nvme-rdma.h nvme_rdma_cm_req / _rep / _rej). */
export const RdmaCm = {
  REQ_LEN: 32, REP_LEN: 32, REJ_LEN: 4,
  /** REJECT STS values (nvme-rdma.h enum nvme_rdma_cm_status) */
  STS: { INVALID_LEN: 1, INVALID_RECFMT: 2, INVALID_QID: 3, INVALID_HSQSIZE: 4, INVALID_HRQSIZE: 5, NO_RESOURCES: 6, INVALID_IRD: 7, INVALID_ORD: 8 },
} as const;
/** The NVMe/RDMA service port (IANA 4420; the RDMA CM service ID of RDMA_PS_TCP port 4420 is 0x106 << 16 | 4420). */
export const NVMF_PORT = 4420;

/** Status names as include/linux/nvme.h spells them, keyed by SCT << 8 | SC (nvme.h folds the SCT in the same way). */
export const STATUS_NAMES: Record<number, string> = {
  0x000: 'NVME_SC_SUCCESS', 0x001: 'NVME_SC_INVALID_OPCODE', 0x002: 'NVME_SC_INVALID_FIELD', 0x004: 'NVME_SC_DATA_XFER_ERROR',
  0x006: 'NVME_SC_INTERNAL', 0x00b: 'NVME_SC_INVALID_NS', 0x00c: 'NVME_SC_CMD_SEQ_ERROR', 0x00f: 'NVME_SC_SGL_INVALID_DATA',
  0x011: 'NVME_SC_SGL_INVALID_TYPE', 0x016: 'NVME_SC_SGL_INVALID_OFFSET', 0x080: 'NVME_SC_LBA_RANGE',
  0x182: 'NVME_SC_CONNECT_INVALID_PARAM', 0x184: 'NVME_SC_CONNECT_INVALID_HOST',
};
export function statusName(sct: number, sc: number): string { return STATUS_NAMES[(sct << 8) | sc] ?? `SCT ${sct} SC 0x${sc.toString(16).padStart(2, '0')}`; }
