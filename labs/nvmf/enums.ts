// Lab 4's enum tables the device defines too (native/include/vl/nvmf.h, nvme.h; names in native/include/vl/names.h
// and nvmf_names.h): declared in the manifest (index.ts `enums`), so app/protocol/tables.test.ts compares them with
// C++ entry for entry.
import { table } from '../../app/protocol/enums.ts';

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
/** The RFC stub's offload-op encodings the SRQ accepts (WRITE 1, READ 2, FLUSH 4 as a bitmask; vl::NvmfOffloadOp). */
export const NvmfOffloadOps = table({ WRITE: 1, READ: 2, READ_WRITE: 3, READ_WRITE_FLUSH: 7 });
/** Identify Controller ONCS bits the soft NVMe function may advertise (NVMe base spec; vl::nvme::Oncs). */
export const NvmeOncs = table({ COMPARE: 1, WRITE_UNCORRECTABLE: 2, DSM: 4, WRITE_ZEROES: 8 });
/** Front-end block sizes of NvmfCaps.lbaDataSizes, by size in bytes (vl::NvmfLbaSize). */
export const NvmfLbaSize = table({ 512: 1, 520: 2, 4096: 4, 4104: 8, 4160: 16 });
