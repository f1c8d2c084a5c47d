// Classic pcap writer (LINKTYPE_ETHERNET, microseconds, host byte order) and reader (both byte orders, usec/nsec).
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "vl/wire.h"

namespace vl::wire {

namespace {

constexpr uint32_t kMagicUsec = 0xA1B2C3D4u, kMagicNsec = 0xA1B23C4Du;
constexpr uint32_t kLinktypeEthernet = 1;
constexpr uint32_t kSnaplen = 262144;           // libpcap's MAXIMUM_SNAPLEN
constexpr uint32_t kMaxRecord = 262144;

bool fail(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
  return false;
}

struct Hdr32 {
  uint32_t v[4];
};

}  // namespace

bool PcapWriter::open(const std::string& path, std::string* err) {
  close();
  failed_ = false;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return fail(err, "pcap: cannot create " + path + ": " + std::strerror(errno));
  struct {
    uint32_t magic;
    uint16_t major, minor;
    int32_t thiszone;
    uint32_t sigfigs, snaplen, linktype;
  } gh = {kMagicUsec, 2, 4, 0, 0, kSnaplen, kLinktypeEthernet};
  static_assert(sizeof gh == 24);
  if (std::fwrite(&gh, sizeof gh, 1, f) != 1) {
    std::fclose(f);
    return fail(err, "pcap: cannot write the header of " + path);
  }
  f_ = f;
  return true;
}

void PcapWriter::write(uint64_t time_ns, const uint8_t* frame, size_t len) {
  if (!f_) return;
  FILE* f = static_cast<FILE*>(f_);
  const uint32_t incl = uint32_t(len > kSnaplen ? kSnaplen : len);
  const uint32_t rh[4] = {uint32_t(time_ns / 1000000000u), uint32_t(time_ns % 1000000000u / 1000u), incl, uint32_t(len)};
  if (std::fwrite(rh, sizeof rh, 1, f) != 1 || (incl && std::fwrite(frame, incl, 1, f) != 1)) failed_ = true;
}

void PcapWriter::close() {
  if (!f_) return;
  if (std::fclose(static_cast<FILE*>(f_)) != 0) failed_ = true;
  f_ = nullptr;
}

PcapWriter::~PcapWriter() { close(); }

bool read_pcap(const std::string& path, std::vector<PcapRecord>& out, std::string* err) {
  out.clear();
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail(err, "pcap: cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> buf;
  uint8_t chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
  const bool ioerr = std::ferror(f);
  std::fclose(f);
  if (ioerr) return fail(err, "pcap: read error on " + path);
  if (buf.size() < 24) return fail(err, "pcap: " + path + " is truncated: " + std::to_string(buf.size()) + " bytes, the file header needs 24");

  uint32_t magic;
  std::memcpy(&magic, buf.data(), 4);
  bool swap, nsec;
  if (magic == kMagicUsec || magic == kMagicNsec) swap = false;
  else if (__builtin_bswap32(magic) == kMagicUsec || __builtin_bswap32(magic) == kMagicNsec) swap = true;
  else {
    char b[96];
    std::snprintf(b, sizeof b, "pcap: bad magic 0x%08x (not a classic pcap file; pcapng is not supported)", magic);
    return fail(err, b);
  }
  nsec = (swap ? __builtin_bswap32(magic) : magic) == kMagicNsec;
  auto u32 = [&](size_t off) {
    uint32_t v;
    std::memcpy(&v, buf.data() + off, 4);
    return swap ? __builtin_bswap32(v) : v;
  };
  auto u16 = [&](size_t off) {
    uint16_t v;
    std::memcpy(&v, buf.data() + off, 2);
    return swap ? __builtin_bswap16(v) : v;
  };
  if (u16(4) != 2) return fail(err, "pcap: unsupported version " + std::to_string(u16(4)) + "." + std::to_string(u16(6)));
  const uint32_t snaplen = u32(16), linktype = u32(20) & 0x0FFFFFFF;
  if (linktype != kLinktypeEthernet)
    return fail(err, "pcap: link type " + std::to_string(linktype) + " is not supported (only LINKTYPE_ETHERNET = 1)");
  const uint32_t limit = (snaplen != 0 && snaplen < kMaxRecord) ? snaplen : kMaxRecord;

  size_t off = 24;
  for (size_t idx = 1; off < buf.size(); idx++) {
    const std::string where = "pcap: record " + std::to_string(idx) + " at offset " + std::to_string(off);
    if (buf.size() - off < 16)
      return fail(err, where + ": truncated record header (" + std::to_string(buf.size() - off) + " of 16 bytes)");
    const uint32_t sec = u32(off), frac = u32(off + 4), incl = u32(off + 8);
    if (incl > limit)
      return fail(err, where + ": oversized record, " + std::to_string(incl) + " bytes > limit " + std::to_string(limit));
    if (buf.size() - off - 16 < incl)
      return fail(err, where + ": truncated record data (" + std::to_string(buf.size() - off - 16) + " of " +
                           std::to_string(incl) + " bytes)");
    PcapRecord r;
    r.time_ns = uint64_t(sec) * 1000000000u + (nsec ? frac : uint64_t(frac) * 1000u);
    r.data.assign(buf.begin() + ptrdiff_t(off + 16), buf.begin() + ptrdiff_t(off + 16 + incl));
    out.push_back(std::move(r));
    off += 16 + incl;
  }
  return true;
}

}  // namespace vl::wire
