// vl_pingpong (ibv_rc_pingpong on the software device): the 52-byte exchange message, and a server and a client
// run as two processes on loopback completing with ibv_rc_pingpong's output shape; bad peers refused.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "net/pingpong.h"
#include "udp_fixture.h"

extern char** environ;
using namespace vlu;
namespace fs = std::filesystem;

namespace {

std::string lo_addr(int host) {
  unsigned p = static_cast<unsigned>(getpid());
  return "127." + std::to_string(1 + (p >> 8) % 250) + "." + std::to_string(p & 0xff) + "." + std::to_string(200 + host);
}
int tcp_port(int k) { return 20000 + static_cast<int>(getpid() % 20000) + k * 7; }

std::string tool() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path p = exe.parent_path() / "vl_pingpong";
  return fs::exists(p) ? p.string() : std::string();
}

struct Proc {
  pid_t pid = -1;
  std::string out_path;
  int status = -1;
  bool start(const std::vector<std::string>& args, const std::string& out) {
    out_path = out;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> av;
    for (auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    int rc = posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0;
  }
  // wait with a safety limit; kills the process (and reports false) when it is exceeded
  bool wait(int64_t limit_ms = 60000) {
    const int64_t end = mono_ms() + limit_ms;
    while (mono_ms() < end) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) { pid = -1; return true; }
      usleep(2000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    pid = -1;
    return false;
  }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
  std::string output() const { std::ifstream f(out_path); std::stringstream ss; ss << f.rdbuf(); return ss.str(); }
  ~Proc() { if (pid > 0) { kill(pid, SIGKILL); waitpid(pid, nullptr, 0); } }
};

// wait until the server listens on its TCP port (it prints "local address" before listening; poll for the port)
bool wait_listening(int port, int64_t limit_ms = 10000) {
  const int64_t end = mono_ms() + limit_ms;
  while (mono_ms() < end) {
    std::ifstream f("/proc/net/tcp");
    std::string line;
    char hexport[8];
    std::snprintf(hexport, sizeof hexport, ":%04X", port);
    while (std::getline(f, line))
      if (line.find(hexport) != std::string::npos && line.find(" 0A ") != std::string::npos) return true;
    usleep(2000);
  }
  return false;
}

struct Shape {
  std::string lqpn, lpsn, lgid, rqpn, rpsn, rgid;
  long long bytes = -1;
  long iters = -1;
};

::testing::AssertionResult parse_output(const std::string& out, Shape& s) {
  static const std::regex local(R"(^  local address:  LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$)");
  static const std::regex remote(R"(^  remote address: LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$)");
  static const std::regex bytes(R"(^(\d+) bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec$)");
  static const std::regex iters(R"(^(\d+) iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter$)");
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  if (lines.size() != 4) return ::testing::AssertionFailure() << "expected 4 lines, got:\n" << out;
  std::smatch m;
  if (!std::regex_match(lines[0], m, local)) return ::testing::AssertionFailure() << "line 1: " << lines[0];
  s.lqpn = m[1]; s.lpsn = m[2]; s.lgid = m[3];
  if (!std::regex_match(lines[1], m, remote)) return ::testing::AssertionFailure() << "line 2: " << lines[1];
  s.rqpn = m[1]; s.rpsn = m[2]; s.rgid = m[3];
  if (!std::regex_match(lines[2], m, bytes)) return ::testing::AssertionFailure() << "line 3: " << lines[2];
  s.bytes = std::stoll(m[1]);
  if (!std::regex_match(lines[3], m, iters)) return ::testing::AssertionFailure() << "line 4: " << lines[3];
  s.iters = std::stol(m[1]);
  return ::testing::AssertionSuccess();
}

void run_pair(const std::vector<std::string>& extra, long size, long iters, int k) {
  const std::string bin = tool();
  ASSERT_FALSE(bin.empty()) << "vl_pingpong not found next to the test binary (node scripts/build.mjs tests builds it)";
  char dir[] = "/tmp/vl_pp_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string port = std::to_string(tcp_port(k));
  std::vector<std::string> common = {"-p", port, "-g", "1", "-s", std::to_string(size), "-n", std::to_string(iters)};
  common.insert(common.end(), extra.begin(), extra.end());
  std::vector<std::string> sa = {bin, "--bind", lo_addr(2)}, ca = {bin, "--bind", lo_addr(3)};
  sa.insert(sa.end(), common.begin(), common.end());
  ca.insert(ca.end(), common.begin(), common.end());
  ca.push_back("127.0.0.1");
  Proc srv, cli;
  ASSERT_TRUE(srv.start(sa, std::string(dir) + "/server.txt"));
  ASSERT_TRUE(wait_listening(tcp_port(k))) << srv.output();
  ASSERT_TRUE(cli.start(ca, std::string(dir) + "/client.txt"));
  ASSERT_TRUE(cli.wait()) << "client still running after the safety limit:\n" << cli.output();
  ASSERT_TRUE(srv.wait()) << "server still running after the safety limit:\n" << srv.output();
  EXPECT_EQ(cli.code(), 0) << cli.output();
  EXPECT_EQ(srv.code(), 0) << srv.output();
  Shape s, c;
  ASSERT_TRUE(parse_output(srv.output(), s));
  ASSERT_TRUE(parse_output(cli.output(), c));
  // each side's remote line is the other's local line
  EXPECT_EQ(s.rqpn, c.lqpn); EXPECT_EQ(s.rpsn, c.lpsn); EXPECT_EQ(s.rgid, c.lgid);
  EXPECT_EQ(c.rqpn, s.lqpn); EXPECT_EQ(c.rpsn, s.lpsn); EXPECT_EQ(c.rgid, s.lgid);
  EXPECT_EQ(s.lgid, "::ffff:" + lo_addr(2));
  EXPECT_EQ(c.lgid, "::ffff:" + lo_addr(3));
  EXPECT_EQ(s.bytes, size * iters * 2);
  EXPECT_EQ(c.bytes, size * iters * 2);
  EXPECT_EQ(s.iters, iters);
  EXPECT_EQ(c.iters, iters);
  fs::remove_all(dir);
}

}  // namespace

TEST(UdpPingpong, MessageFormatMatchesRcPingpong) {
  vl::net::PpDest d;
  d.lid = 0; d.qpn = 0x11; d.psn = 0xecb881;
  const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xc0, 0xa8, 0x4d, 0x02};
  std::memcpy(d.gid, gid, 16);
  std::string m = vl::net::pp_format(d);
  ASSERT_EQ(m.size(), 52u);
  EXPECT_EQ(m, std::string("0000:000011:ecb881:00000000000000000000ffffc0a84d02") + '\0');   // docs/wire.md 3.7 observed
  auto back = vl::net::pp_parse(m.data(), m.size());
  ASSERT_TRUE(back.ok()) << back.msg;
  EXPECT_EQ(back.value.qpn, 0x11u);
  EXPECT_EQ(back.value.psn, 0xecb881u);
  EXPECT_EQ(std::memcmp(back.value.gid, gid, 16), 0);
  std::string server = std::string("0000:000011:f3463c:00000000000000000000ffffc0a84d01") + '\0';
  auto sv = vl::net::pp_parse(server.data(), server.size());
  ASSERT_TRUE(sv.ok());
  EXPECT_EQ(sv.value.psn, 0xf3463cu);
  EXPECT_EQ(sv.value.gid[15], 1);
  // refusals
  EXPECT_FALSE(vl::net::pp_parse(m.data(), 51).ok());
  std::string bad = m; bad[51] = 'x';
  EXPECT_NE(vl::net::pp_parse(bad.data(), 52).msg.find("NUL"), std::string::npos);
  bad = m; bad[4] = '-';
  EXPECT_FALSE(vl::net::pp_parse(bad.data(), 52).ok());
  bad = m; bad[7] = 'g';
  EXPECT_NE(vl::net::pp_parse(bad.data(), 52).msg.find("QPN"), std::string::npos);
  bad = m; bad[40] = ' ';
  EXPECT_NE(vl::net::pp_parse(bad.data(), 52).msg.find("GID"), std::string::npos);
}

TEST(UdpPingpong, ServerAndClientCompletePolling) { run_pair({}, 4096, 500, 0); }

TEST(UdpPingpong, ServerAndClientCompleteWithEventsAndMultiPacketMessages) {
  run_pair({"-e", "-m", "2048", "-r", "16"}, 10000, 200, 1);
}

TEST(UdpPingpong, PeerWithoutGidIsRefused) {
  const std::string bin = tool();
  ASSERT_FALSE(bin.empty());
  char dir[] = "/tmp/vl_pp_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string port = std::to_string(tcp_port(2));
  Proc srv, cli;
  ASSERT_TRUE(srv.start({bin, "--bind", lo_addr(2), "-g", "1", "-p", port}, std::string(dir) + "/s.txt"));
  ASSERT_TRUE(wait_listening(tcp_port(2)));
  ASSERT_TRUE(cli.start({bin, "--bind", lo_addr(3), "-p", port, "127.0.0.1"}, std::string(dir) + "/c.txt"));   // no -g
  ASSERT_TRUE(cli.wait());
  ASSERT_TRUE(srv.wait());
  EXPECT_NE(srv.code(), 0);
  EXPECT_NE(cli.code(), 0);
  EXPECT_NE(srv.output().find("-g"), std::string::npos) << srv.output();
  EXPECT_NE(cli.output().find("Couldn't get remote LID"), std::string::npos) << cli.output();
  fs::remove_all(dir);
}

TEST(UdpPingpong, MalformedExchangeMessageIsRefused) {
  const std::string bin = tool();
  ASSERT_FALSE(bin.empty());
  char dir[] = "/tmp/vl_pp_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const int port = tcp_port(3);
  Proc srv;
  ASSERT_TRUE(srv.start({bin, "--bind", lo_addr(2), "-g", "1", "-p", std::to_string(port)}, std::string(dir) + "/s.txt"));
  ASSERT_TRUE(wait_listening(port));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  std::string msg = std::string("0000:0000zz:ecb881:00000000000000000000ffff7f000001") + '\0';
  ASSERT_EQ(write(fd, msg.data(), msg.size()), 52);
  char buf[64];
  EXPECT_EQ(read(fd, buf, sizeof buf), 0);          // closed without an answer
  close(fd);
  ASSERT_TRUE(srv.wait());
  EXPECT_EQ(srv.code(), 1);
  EXPECT_NE(srv.output().find("QPN"), std::string::npos) << srv.output();
  fs::remove_all(dir);
}

TEST(UdpPingpong, BadOptionsAreRefused) {
  const std::string bin = tool();
  ASSERT_FALSE(bin.empty());
  char dir[] = "/tmp/vl_pp_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  struct Case { std::vector<std::string> args; std::string says; };
  for (auto& c : std::vector<Case>{{{"-m", "1000"}, "-m"}, {{"-s", "0"}, "-s"}, {{"-n", "x"}, "-n"}, {{"-p", "70000"}, "-p"},
                                   {{"-d", "vlnosuch0"}, "vlnosuch0"}, {{"-g", "9", "--bind", lo_addr(4)}, "sgid of index 9"},
                                   {{"--bind", "not-an-ip"}, "not a numeric"}}) {
    std::vector<std::string> a = {bin};
    a.insert(a.end(), c.args.begin(), c.args.end());
    Proc p;
    ASSERT_TRUE(p.start(a, std::string(dir) + "/o.txt"));
    ASSERT_TRUE(p.wait(10000));
    EXPECT_EQ(p.code(), 1) << c.args[0];
    EXPECT_NE(p.output().find(c.says), std::string::npos) << p.output();
  }
  fs::remove_all(dir);
}
