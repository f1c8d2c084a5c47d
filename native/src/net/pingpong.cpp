// ibv_rc_pingpong's TCP exchange (rdma-core libibverbs/examples/rc_pingpong.c pp_client_exch_dest /
// pp_server_exch_dest, pingpong.c gid_to_wire_gid / wire_gid_to_gid).
#include "net/pingpong.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/impl.h"

namespace vl::net {

namespace {

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool hexfield(const char* s, int n, uint64_t& out) {
  out = 0;
  for (int i = 0; i < n; i++) {
    int v = hexval(s[i]);
    if (v < 0) return false;
    out = (out << 4) | uint64_t(v);
  }
  return true;
}

// one read() of the exact size, as rc_pingpong does; a short message is an error (peer must write it at once)
Status read_msg(int fd, void* buf, size_t n, const char* what) {
  ssize_t r;
  do { r = recv(fd, buf, n, MSG_WAITALL); } while (r < 0 && errno == EINTR);
  if (r < 0) return fail(errno, std::string("couldn't read ") + what + ": " + std::strerror(errno));
  if (size_t(r) != n) return fail(EPROTO, std::to_string(r) + "/" + std::to_string(n) + ": couldn't read " + what + " (connection closed early)");
  return ok();
}

Status write_msg(int fd, const void* buf, size_t n, const char* what) {
  ssize_t r;
  do { r = send(fd, buf, n, MSG_NOSIGNAL); } while (r < 0 && errno == EINTR);
  if (r < 0 || size_t(r) != n) return fail(r < 0 ? errno : EPROTO, std::string("couldn't send ") + what + (r < 0 ? std::string(": ") + std::strerror(errno) : ""));
  return ok();
}

}  // namespace

std::string pp_format(const PpDest& d) {
  char gid[33];
  for (int i = 0; i < 4; i++) {
    uint32_t w = (uint32_t(d.gid[4 * i]) << 24) | (uint32_t(d.gid[4 * i + 1]) << 16) | (uint32_t(d.gid[4 * i + 2]) << 8) | d.gid[4 * i + 3];
    std::snprintf(gid + 8 * i, 9, "%08x", w);
  }
  char msg[kPingpongMsgLen + 8];
  std::snprintf(msg, sizeof msg, "%04x:%06x:%06x:%s", d.lid & 0xffff, d.qpn & 0xffffff, d.psn & 0xffffff, gid);
  return std::string(msg, kPingpongMsgLen - 1) + std::string(1, '\0');
}

Result<PpDest> pp_parse(const void* buf, size_t n) {
  const char* s = static_cast<const char*>(buf);
  if (n != kPingpongMsgLen) return rfail<PpDest>(EPROTO, "message: " + std::to_string(n) + " bytes, expected " + std::to_string(kPingpongMsgLen));
  if (s[51] != '\0') return rfail<PpDest>(EPROTO, "message: byte 51 is not the terminating NUL");
  if (s[4] != ':' || s[11] != ':' || s[18] != ':') return rfail<PpDest>(EPROTO, "message: expected LLLL:QQQQQQ:PPPPPP:GID (':' at 4, 11, 18)");
  PpDest d;
  uint64_t v;
  if (!hexfield(s, 4, v)) return rfail<PpDest>(EPROTO, "message: LID '" + std::string(s, 4) + "' is not 4 hex digits");
  d.lid = uint32_t(v);
  if (!hexfield(s + 5, 6, v)) return rfail<PpDest>(EPROTO, "message: QPN '" + std::string(s + 5, 6) + "' is not 6 hex digits");
  d.qpn = uint32_t(v);
  if (!hexfield(s + 12, 6, v)) return rfail<PpDest>(EPROTO, "message: PSN '" + std::string(s + 12, 6) + "' is not 6 hex digits");
  d.psn = uint32_t(v);
  for (int i = 0; i < 16; i++) {
    if (!hexfield(s + 19 + 2 * i, 2, v)) return rfail<PpDest>(EPROTO, "message: GID '" + std::string(s + 19, 32) + "' is not 32 hex digits");
    d.gid[i] = uint8_t(v);
  }
  return rok(d);
}

Result<PpDest> pp_server_exchange(uint16_t port, const PpDest& mine, const std::function<Status(const PpDest&)>& connect) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string svc = std::to_string(port);
  int rc = getaddrinfo(nullptr, svc.c_str(), &hints, &res);
  if (rc != 0) return rfail<PpDest>(EINVAL, std::string(gai_strerror(rc)) + " for port " + svc);
  int lfd = -1;
  int err = 0;
  for (addrinfo* t = res; t; t = t->ai_next) {
    lfd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC, t->ai_protocol);
    if (lfd < 0) { err = errno; continue; }
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, t->ai_addr, t->ai_addrlen) == 0) break;
    err = errno;
    close(lfd);
    lfd = -1;
  }
  freeaddrinfo(res);
  if (lfd < 0) return rfail<PpDest>(err, "couldn't listen to port " + svc + ": " + std::strerror(err));
  if (listen(lfd, 1) != 0) { int e = errno; close(lfd); return rfail<PpDest>(e, std::string("listen: ") + std::strerror(e)); }
  int fd;
  do { fd = accept(lfd, nullptr, nullptr); } while (fd < 0 && errno == EINTR);
  int e = errno;
  close(lfd);
  if (fd < 0) return rfail<PpDest>(e, std::string("accept() failed: ") + std::strerror(e));
  char msg[kPingpongMsgLen];
  Result<PpDest> out;
  Status st = read_msg(fd, msg, sizeof msg, "remote address");
  if (st.ok()) {
    out = pp_parse(msg, sizeof msg);
    if (out.ok()) {
      Status c = connect(out.value);
      if (!c.ok()) { out.err = c.err; out.msg = "couldn't connect to remote QP: " + c.msg; }
    }
    if (out.ok()) {
      std::string m = pp_format(mine);
      st = write_msg(fd, m.data(), m.size(), "local address");
      char done[5];
      if (st.ok()) st = read_msg(fd, done, sizeof done, "\"done\"");
      if (st.ok() && std::memcmp(done, "done", 5) != 0) st = fail(EPROTO, "expected \"done\" from the client");
      if (!st.ok()) { out.err = st.err; out.msg = st.msg; }
    }
  } else {
    out.err = st.err; out.msg = st.msg;
  }
  close(fd);
  return out;
}

Result<PpDest> pp_client_exchange(const std::string& host, uint16_t port, const PpDest& mine) {
  if (host.empty() || host.size() > 255) return rfail<PpDest>(EINVAL, "server name: empty or too long");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string svc = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), svc.c_str(), &hints, &res);
  if (rc != 0) return rfail<PpDest>(EINVAL, std::string(gai_strerror(rc)) + " for " + host + ":" + svc);
  int fd = -1, err = 0;
  for (addrinfo* t = res; t; t = t->ai_next) {
    fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC, t->ai_protocol);
    if (fd < 0) { err = errno; continue; }
    if (::connect(fd, t->ai_addr, t->ai_addrlen) == 0) break;
    err = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) return rfail<PpDest>(err, "couldn't connect to " + host + ":" + svc + ": " + std::strerror(err));
  std::string m = pp_format(mine);
  Result<PpDest> out;
  Status st = write_msg(fd, m.data(), m.size(), "local address");
  char msg[kPingpongMsgLen];
  if (st.ok()) st = read_msg(fd, msg, sizeof msg, "remote address");
  if (st.ok()) {
    out = pp_parse(msg, sizeof msg);
    if (out.ok()) st = write_msg(fd, "done", 5, "\"done\"");
  }
  if (!st.ok()) { out.err = st.err; out.msg = st.msg; }
  close(fd);
  return out;
}

}  // namespace vl::net
