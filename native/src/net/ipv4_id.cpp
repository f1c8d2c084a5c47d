// IPv4 ID of a received RoCEv2 datagram (recvmsg does not tell it, the ICRC covers it): see ipv4_id.h.
#include "net/ipv4_id.h"

#include "net/udp.h"

#include <utility>

namespace vl::net {

namespace {

uint32_t trailing_icrc(const uint8_t* p, size_t n) {
  return uint32_t(p[n - 4]) | uint32_t(p[n - 3]) << 8 | uint32_t(p[n - 2]) << 16 | uint32_t(p[n - 1]) << 24;
}

// What each bit of the IPv4 ID flips in the ICRC of an n-byte packet: icrc(id) = icrc(0) ^ sum of col[i] over the
// set bits i of id (the CRC is linear, and only the packet length decides how far the ID field is from the end).
// c0 = icrc with ID 0 of this packet. Cached per length, so the 16 extra CRC passes are paid once per length.
const uint32_t* ipv4_id_basis(const wire::Framing& f, const uint8_t* p, size_t n, uint32_t c0) {
  struct Basis { size_t len = 0; uint32_t col[16]; };
  static thread_local Basis cache[8];
  static thread_local unsigned next = 0;
  for (auto& c : cache) if (c.len == n) return c.col;
  Basis* b = &cache[next++ % 8];
  wire::Framing g = f;
  for (int i = 0; i < 16; i++) { g.ip_id = static_cast<uint16_t>(1u << i); b->col[i] = wire::icrc(g, p, n) ^ c0; }
  b->len = n;
  return b->col;
}

uint32_t ipv4_id_delta(const uint32_t* col, uint16_t id) {
  uint32_t d = 0;
  for (int i = 0; i < 16; i++) if (id >> i & 1) d ^= col[i];
  return d;
}

// solve sum(x_i * col_i) = target over GF(2): Gaussian elimination on 32-bit columns. False: no ID explains it.
bool solve_ipv4_id(const uint32_t* basis, uint32_t target, uint16_t& x) {
  uint32_t col[16];
  uint16_t comb[16];
  for (int i = 0; i < 16; i++) { col[i] = basis[i]; comb[i] = static_cast<uint16_t>(1u << i); }
  x = 0;
  int rank = 0;
  for (int bit = 31; bit >= 0 && rank < 16; bit--) {
    int piv = -1;
    for (int i = rank; i < 16; i++) if (col[i] >> bit & 1) { piv = i; break; }
    if (piv < 0) continue;
    std::swap(col[piv], col[rank]);
    std::swap(comb[piv], comb[rank]);
    for (int i = 0; i < 16; i++)
      if (i != rank && (col[i] >> bit & 1)) { col[i] ^= col[rank]; comb[i] ^= comb[rank]; }
    if (target >> bit & 1) { target ^= col[rank]; x ^= comb[rank]; }
    rank++;
  }
  return target == 0;
}

}  // namespace

uint32_t ipv4_icrc_check(wire::Framing& f, const uint8_t* p, size_t n, uint16_t pos, int& prev, bool any, uint32_t c0) {
  f.ip_id = 0;
  const int before = prev;
  prev = -1;
  if (f.ipv6 || n < 16) return c0;
  const uint32_t got = trailing_icrc(p, n);
  if (c0 == got) { prev = 0; return c0; }
  const uint32_t* col = ipv4_id_basis(f, p, n, c0);
  const uint32_t target = got ^ c0;
  auto fits = [&](uint16_t id) { return ipv4_id_delta(col, id) == target; };
  uint16_t x = 0;
  bool found = false;
  if (before >= 0 && fits(static_cast<uint16_t>(before + 1))) { x = static_cast<uint16_t>(before + 1); found = true; }
  else if (pos && fits(pos)) { x = pos; found = true; }
  else if (any) found = solve_ipv4_id(col, target, x);
  else for (uint16_t id = 1; id < kGsoIdWindow && !found; id++) if (fits(id)) { x = id; found = true; }
  if (!found) return c0;
  f.ip_id = x;
  prev = x;
  return got;                                      // exact: icrc(x) = c0 ^ delta(x) by linearity
}

bool recover_ipv4_id(wire::Framing& f, const uint8_t* p, size_t n) {
  if (f.ipv6 || n < 16) return false;
  wire::Framing g = f;
  g.ip_id = 0;
  int prev = -1;
  const uint32_t c = ipv4_icrc_check(g, p, n, 0, prev, true, wire::icrc(g, p, n));
  if (c != trailing_icrc(p, n)) return false;
  f.ip_id = g.ip_id;
  return true;
}

}  // namespace vl::net
