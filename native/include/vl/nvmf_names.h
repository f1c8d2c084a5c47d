// Lab 4's constant tables that the console defines too (labs/nvmf/enums.ts, declared in the lab's manifest
// `enums`): native/tools/vl_tables.cpp prints them with kEnumTables and app/protocol/tables.test.ts compares them
// entry for entry. The names are the TypeScript ones (the command schemas' enum values). Header-only, no Node.
#pragma once
#include "vl/names.h"
#include "vl/nvme.h"
#include "vl/nvmf.h"

namespace vl {

// the offload_ops values the RFC's ibv_srq_init_attr_ex accepts (nvmf.h NvmfOffloadOp bits)
inline constexpr EnumName kNvmfOffloadOpsNames[] = {
    {NVMF_OP_WRITE, "WRITE"}, {NVMF_OP_READ, "READ"}, {NVMF_READ_WRITE, "READ_WRITE"}, {NVMF_READ_WRITE_FLUSH, "READ_WRITE_FLUSH"},
};
// Identify Controller ONCS bits the soft NVMe function may advertise (nvme.h Oncs)
inline constexpr EnumName kNvmeOncsNames[] = {
    {nvme::ONCS_COMPARE, "COMPARE"}, {nvme::ONCS_WRITE_UNCOR, "WRITE_UNCORRECTABLE"}, {nvme::ONCS_DSM, "DSM"},
    {nvme::ONCS_WRITE_ZEROES, "WRITE_ZEROES"},
};
// front-end block sizes of NvmfCaps::lba_data_sizes (nvmf.h NvmfLbaSize), named by their size in bytes
inline constexpr EnumName kNvmfLbaSizeNames[] = {
    {NVMF_LBA_512, "512"}, {NVMF_LBA_520, "520"}, {NVMF_LBA_4096, "4096"}, {NVMF_LBA_4104, "4104"}, {NVMF_LBA_4160, "4160"},
};

inline constexpr EnumTable kNvmfLabTables[] = {
    table_of("NvmfOffloadOps", kNvmfOffloadOpsNames), table_of("NvmeOncs", kNvmeOncsNames),
    table_of("NvmfLbaSize", kNvmfLbaSizeNames),
};

}  // namespace vl
