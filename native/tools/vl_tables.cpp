// vl_tables: prints the device's enum tables (vl/names.h, and a lab's: vl/nvmf_names.h), the wire codec's BTH opcode names
// and the send opcodes' QP types (core/wr_info.h) as one JSON object,
//   { "tables": { "WcStatus": [[0, "IBV_WC_SUCCESS"], ...], ... }, "bth": [[0, "RC Send First"], ...] }
// for app/protocol/tables.test.ts, which checks app/protocol's tables against them.
#include <cstdio>

#include "vl/names.h"
#include "vl/nvmf_names.h"
#include "vl/wire.h"
#include "core/wr_info.h"

namespace {
void str(const char* s) {
  std::putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') std::putchar('\\');
    std::putchar(*s);
  }
  std::putchar('"');
}
}  // namespace

int main() {
  std::printf("{\"tables\":{");
  bool first_table = true;
  auto table = [&](const vl::EnumTable& t) {
    if (!first_table) std::putchar(',');
    first_table = false;
    str(t.name);
    std::printf(":[");
    for (size_t i = 0; i < t.count; i++) {
      std::printf("%s[%llu,", i ? "," : "", static_cast<unsigned long long>(t.entries[i].value));
      str(t.entries[i].name);
      std::putchar(']');
    }
    std::putchar(']');
  };
  for (const auto& t : vl::kEnumTables) table(t);
  for (const auto& t : vl::kNvmfLabTables) table(t);
  std::printf("},\"bth\":[");
  bool first_op = true;
  for (int op = 0; op < 256; op++) {
    if (!vl::wire::opcode_mask(static_cast<uint8_t>(op))) continue;
    std::printf("%s[%d,", first_op ? "" : ",", op);
    first_op = false;
    str(vl::wire::opcode_name(static_cast<uint8_t>(op)));
    std::putchar(']');
  }
  // the send opcodes' facts (core/wr_info.h): [opcode, QP-type bits RC 1 | UC 2 | UD 4, flags]
  std::printf("],\"wrOps\":[");
  for (size_t i = 0; i < std::size(vl::kWrOpInfo); i++)
    std::printf("%s[%u,%u,%u]", i ? "," : "", vl::kWrOpInfo[i].op, vl::kWrOpInfo[i].qp_types, vl::kWrOpInfo[i].flags);
  std::printf("]}\n");
  return 0;
}
