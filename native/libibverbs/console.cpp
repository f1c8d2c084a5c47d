// Live in the console (docs/libibverbs.md, "Live in the console"): a program run with VERBSLAB_CONSOLE set streams
// its device's events, the device's objects and rings, and its network capture to a running Verbs Lab console over
// a Unix socket. Opt-in: without VERBSLAB_CONSOLE nothing here runs and event capture stays off.
//
//   VERBSLAB_CONSOLE        the console's socket, or its session directory (socket DIR/console.sock)
//   VERBSLAB_CONSOLE_TOKEN  the console's token (default: the file DIR/console.token next to the socket)
//
// Two halves that share only a bounded queue:
//   collect (console_collect_locked): on the thread that runs the device (a post, a poll, the progress thread),
//     with the session lock held. It moves the drained events and captured datagrams into the queue (no I/O, no
//     formatting); past the bound they are counted as dropped, never silently lost. Every kStateMs it also writes
//     the device's state (devices, objects with their keys and ranges, QPs, rings) as one JSON text.
//   export (exporter_main): a thread of its own that connects, formats the events as the protocol's JSON
//     (vl::json::append_events, the text the backend host sends) and writes newline-delimited JSON messages to the
//     socket. It is the only one that blocks on the socket; a console that reads slowly fills the queue, and the
//     program's data path goes on.
//
// Messages (one JSON object per line; app/protocol/attach.ts is the console's schema of them):
//   {"t":"hello","v":1,"token":..,"pid":..,"program":..,"argv":[..]}   first, then the console answers one line,
//                                                  {"t":"welcome","session":N} or {"t":"refused","message":..}
//   {"t":"events","dropped":N,"events":[..]}      DeviceEvent objects; dropped: events lost before these
//   {"t":"frames","dropped":N,"frames":[{"t":ns,"hex":..}]}   the datagrams sent and received, Ethernet-framed
//   {"t":"state",..}                              the device as it is now (also right after attaching: objects
//                                                  that existed before are known from it)
//   {"t":"beat"}                                  alive (a second without anything else)
//   {"t":"bye","reason":..}                       the program exits (atexit); a connection closed without it
//                                                  is a program killed or crashed
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "../addon/event_json.h"
#include "lib.h"

namespace vlib {
namespace {

constexpr size_t kMaxEvents = 1 << 16;          // queued events before new ones are dropped (counted)
constexpr size_t kMaxFrames = 1 << 14;          // queued datagrams
constexpr size_t kLineBytes = 512 * 1024;       // a message is cut after this much JSON (the console takes 4 MiB)
constexpr int64_t kStateMs = 250;               // the state is sent this often while the device runs
constexpr size_t kRingSlots = 64;               // slots per ring in a state message (the newest)

using Clock = std::chrono::steady_clock;

struct Exporter {
  std::string path, token;
  std::mutex mu;                                // guards the queue below; never held during I/O
  std::condition_variable cv;
  std::vector<vl::Event> events;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> frames;
  std::string state;                            // the newest state message (replaces an unsent one)
  size_t state_pos = 0;                         // events queued before it was taken (they go out before it)
  uint64_t dropped_events = 0, dropped_frames = 0;
  bool exiting = false, flushed = false;
  std::atomic<bool> attached{false};            // connected and welcomed: collect queues, capture is on
  std::atomic<bool> want_state{false};          // send the state at the next collect (just attached)
  bool capturing = false, udp_capturing = false;   // event / datagram capture as last set (session lock held)
  Clock::time_point last_state{};
  std::thread thread;
};

Exporter* ex = nullptr;                         // set once by console_init; never destroyed (see lib.h's g())

void jstr(std::string& o, const std::string& s) {
  o += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += static_cast<char>(c); }
    else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += static_cast<char>(c);
  }
  o += '"';
}
void jnum(std::string& o, uint64_t v) {          // as the addon's U64: a number up to 2^53-1, else a "0x.." string
  char b[24];
  if (v <= (1ull << 53) - 1) snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(v));
  else snprintf(b, sizeof b, "\"0x%llx\"", static_cast<unsigned long long>(v));
  o += b;
}
struct Obj {                                      // {"k":v,...} written in order
  std::string& o; bool first = true;
  explicit Obj(std::string& s) : o(s) { o += '{'; }
  ~Obj() { o += '}'; }
  std::string& key(const char* k) { if (!first) o += ','; first = false; o += '"'; o += k; o += "\":"; return o; }
  void num(const char* k, uint64_t v) { jnum(key(k), v); }
  void str(const char* k, const std::string& v) { jstr(key(k), v); }
  void boolean(const char* k, bool v) { key(k) += v ? "true" : "false"; }
};

std::string gid_text(const uint8_t g[16]) {       // as the addon's GidText
  char b[48];
  snprintf(b, sizeof b, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2],
           g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
  return b;
}

// The fields of the addon's MrObj / MwObj / QpObj (native/addon), so the console reads them as it reads its own.
void mr_json(std::string& o, const vl::MrInfo& m) {
  Obj j(o);
  j.num("handle", m.handle); j.num("pd", m.pd); j.num("lkey", m.lkey); j.num("rkey", m.rkey);
  j.num("addr", m.addr); j.num("length", m.length); j.num("iova", m.iova); j.num("access", m.access);
  j.str("kind", m.kind); j.str("state", m.state);
  std::string& s = j.key("sg");
  s += '[';
  for (size_t i = 0; i < m.sg.size(); i++) {
    if (i) s += ',';
    Obj g(s);
    g.num("addr", m.sg[i].addr); g.num("length", m.sg[i].length); g.num("lkey", m.sg[i].lkey);
  }
  s += ']';
}
void mw_json(std::string& o, const vl::MwInfo& w) {
  Obj j(o);
  j.num("handle", w.handle); j.num("pd", w.pd); j.num("rkey", w.rkey); j.num("type", w.type); j.str("state", w.state);
  j.num("mr", w.mr); j.num("qp", w.qp); j.num("addr", w.addr); j.num("length", w.length); j.num("access", w.access);
}
void qp_json(std::string& o, const vl::QpInfo& q) {
  Obj j(o);
  j.num("handle", q.handle); j.num("qpNum", q.qp_num); j.num("device", q.device);
  {
    Obj i(j.key("init"));
    i.num("pd", q.init.pd); i.num("sendCq", q.init.send_cq); i.num("recvCq", q.init.recv_cq); i.num("srq", q.init.srq);
    i.num("qpType", q.init.qp_type); i.boolean("sqSigAll", q.init.sq_sig_all);
    Obj c(i.key("cap"));
    c.num("maxSendWr", q.init.cap.max_send_wr); c.num("maxRecvWr", q.init.cap.max_recv_wr);
    c.num("maxSendSge", q.init.cap.max_send_sge); c.num("maxRecvSge", q.init.cap.max_recv_sge);
    c.num("maxInlineData", q.init.cap.max_inline_data);
  }
  Obj a(j.key("attr"));
  const vl::QpAttr& t = q.attr;
  a.num("qpState", t.qp_state); a.num("curQpState", t.cur_qp_state); a.num("pathMtu", t.path_mtu);
  a.num("qpAccessFlags", t.qp_access_flags); a.num("qkey", t.qkey); a.num("rqPsn", t.rq_psn); a.num("sqPsn", t.sq_psn);
  a.num("destQpNum", t.dest_qp_num); a.num("pkeyIndex", t.pkey_index); a.num("portNum", t.port_num);
  a.num("maxRdAtomic", t.max_rd_atomic); a.num("maxDestRdAtomic", t.max_dest_rd_atomic);
  a.num("minRnrTimer", t.min_rnr_timer); a.num("timeout", t.timeout); a.num("retryCnt", t.retry_cnt);
  a.num("rnrRetry", t.rnr_retry); a.str("dgid", gid_text(t.dgid)); a.num("sgidIndex", t.sgid_index);
  a.num("destDevice", t.dest_device);
}

const char* ring_queue(vl::RingQueue q) {
  switch (q) { case vl::RingQueue::Sq: return "sq"; case vl::RingQueue::Rq: return "rq"; case vl::RingQueue::Cq: return "cq"; default: return "srq"; }
}
const char* slot_state(vl::SlotState s) {
  switch (s) { case vl::SlotState::Posted: return "posted"; case vl::SlotState::Started: return "started"; default: return "done"; }
}

// The device as it is now: the state message (session lock held).
std::string state_json() {
  Global& G = g();
  vl::SessionImpl& S = *G.S;
  std::string o;
  Obj j(o);
  j.str("t", "state");
  j.num("seq", G.s->last_seq()); j.num("nowNs", G.s->now_ns()); j.str("address", G.address); j.str("profile", G.profile);
  if (G.udp) {                                  // the network attachment (NetOut of the console's device.list)
    Obj n(j.key("net"));
    n.str("interface", G.udp->interface_name()); n.num("port", G.udp->port());
    const vl::net::UdpStats& t = G.udp->stats();
    Obj x(n.key("stats"));
    x.num("txPackets", t.tx_packets); x.num("txBytes", t.tx_bytes); x.num("rxPackets", t.rx_packets);
    x.num("rxBytes", t.rx_bytes); x.num("rxDropped", t.rx_dropped); x.num("txDropped", t.tx_dropped);
  }
  {
    std::string& d = j.key("devices");
    d += '[';
    bool first = true;
    for (const auto& di : G.s->devices()) {
      if (!first) d += ',';
      first = false;
      Obj x(d);
      x.num("handle", di.handle); x.str("name", di.name); x.str("profile", di.profile.name);
      char guid[24];
      snprintf(guid, sizeof guid, "%016llx", static_cast<unsigned long long>(di.node_guid));
      x.str("nodeGuid", guid);
      std::string& gs = x.key("gids");
      gs += '[';
      for (size_t i = 0; i < di.gids.size(); i++) {
        if (i) gs += ',';
        Obj e(gs);
        e.num("index", di.gids[i].index); e.str("gid", gid_text(di.gids[i].gid)); e.str("type", di.gids[i].type);
      }
      gs += ']';
      x.num("portState", di.port_state);
    }
    d += ']';
  }
  {
    std::string& s = j.key("objects");
    s += '[';
    bool first = true;
    // one object: kind, handle, device, and (MR / MW) the key, range and access as the device holds them
    auto obj = [&](const char* kind, vl::Handle h, vl::Handle dev, auto&& info) {
      if (!first) s += ',';
      first = false;
      Obj x(s);
      x.str("kind", kind); x.num("handle", h); x.num("device", dev);
      info(x);
    };
    auto none = [](Obj&) {};
    for (auto& [h, p] : S.pds) obj("pd", h, p.dev, none);
    for (auto& [h, m] : S.mrs) obj("mr", h, m.dev, [&, h = h](Obj& x) { if (auto i = G.s->mr_info(h)) mr_json(x.key("info"), *i); });
    for (auto& [h, w] : S.mws) obj("mw", h, w.dev, [&, h = h](Obj& x) { if (auto i = G.s->mw_info(h)) mw_json(x.key("info"), *i); });
    for (auto& [h, c] : S.cqs) obj("cq", h, c.dev, none);
    for (auto& [h, r] : S.srqs) obj("srq", h, r.dev, none);
    for (auto& [h, q] : S.qps) obj("qp", h, q.dev, none);
    for (auto& [h, a] : S.ahs) obj("ah", h, a.dev, none);
    s += ']';
  }
  {
    std::string& s = j.key("qps");
    s += '[';
    bool first = true;
    for (auto& [h, q] : S.qps) {
      (void)q;
      auto i = G.s->query_qp(h);
      if (!i) continue;
      if (!first) s += ',';
      first = false;
      qp_json(s, *i);
    }
    s += ']';
  }
  {
    std::string& s = j.key("rings");
    s += '[';
    bool first = true;
    for (const auto& r : G.s->queue_snapshot(kRingSlots)) {
      if (!first) s += ',';
      first = false;
      Obj x(s);
      x.num("owner", r.owner); x.num("device", r.device); x.str("queue", ring_queue(r.queue)); x.num("depth", r.depth);
      x.num("producer", r.producer); x.num("consumer", r.consumer); x.num("first", r.first);
      std::string& sl = x.key("slots");
      sl += '[';
      for (size_t i = 0; i < r.slots.size(); i++) {
        if (i) sl += ',';
        const auto& z = r.slots[i];
        Obj y(sl);
        y.num("wrId", z.wr_id); y.num("opcode", z.opcode); y.num("status", z.status); y.str("state", slot_state(z.state));
        if (r.queue == vl::RingQueue::Cq) y.num("qpNum", z.qp_num);
      }
      sl += ']';
    }
    s += ']';
  }
  return o;
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// One line from the console within timeout_ms (the answer to hello).
std::string read_line(int fd, int timeout_ms) {
  std::string line;
  const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (line.size() < 4096) {
    const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    char c;
    ssize_t n = recv(fd, &c, 1, 0);
    if (n <= 0) break;
    if (c == '\n') return line;
    line += c;
  }
  return {};
}

std::string cmdline_json() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string o = "[";
  size_t start = 0;
  bool first = true;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    if (!first) o += ',';
    first = false;
    jstr(o, all.substr(start, end - start));
    start = end + 1;
  }
  return o + "]";
}

// Connects and says hello; 1 = welcomed, 0 = not reachable (try again later), -1 = refused (stop trying).
int connect_console(int& fd) {
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", ex->path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) { close(fd); fd = -1; return 0; }
  std::string prog;
  {
    std::ifstream f("/proc/self/comm");
    std::getline(f, prog);
  }
  std::string hello;
  {
    Obj j(hello);
    j.str("t", "hello"); j.num("v", 1); j.str("token", ex->token); j.num("pid", static_cast<uint64_t>(getpid()));
    j.str("program", prog); j.key("argv") += cmdline_json();
  }
  hello += '\n';
  std::string answer;
  if (write_all(fd, hello)) answer = read_line(fd, 5000);
  if (answer.find("\"t\":\"welcome\"") != std::string::npos) return 1;
  if (answer.find("\"t\":\"refused\"") != std::string::npos) {
    fprintf(stderr, "verbslab: the console at %s refused this program: %s\n", ex->path.c_str(), answer.c_str());
    close(fd); fd = -1;
    return -1;
  }
  close(fd); fd = -1;
  return 0;
}

void frames_json(std::string& out, const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& fr, size_t& i,
                 uint64_t dropped) {
  static const char kHex[] = "0123456789abcdef";
  out += "{\"t\":\"frames\",\"dropped\":";
  jnum(out, dropped);
  out += ",\"frames\":[";
  const size_t start = out.size();
  bool first = true;
  for (; i < fr.size() && out.size() - start < kLineBytes; i++) {
    if (!first) out += ',';
    first = false;
    out += "{\"t\":";
    jnum(out, fr[i].first);
    out += ",\"hex\":\"";
    for (uint8_t b : fr[i].second) { out += kHex[b >> 4]; out += kHex[b & 15]; }
    out += "\"}";
  }
  out += "]}\n";
}

void exporter_main(int fd) {
  auto last_sent = Clock::now();
  bool told_lost = false;
  for (;;) {
    if (fd < 0) {
      {
        std::lock_guard<std::mutex> lk(ex->mu);
        if (ex->exiting) { ex->flushed = true; ex->cv.notify_all(); return; }
      }
      const int r = connect_console(fd);
      if (r < 0) { std::lock_guard<std::mutex> lk(ex->mu); ex->flushed = true; ex->cv.notify_all(); return; }
      if (r == 0) {                             // no console (yet): look again in half a second
        std::unique_lock<std::mutex> lk(ex->mu);
        ex->cv.wait_for(lk, std::chrono::milliseconds(500), [] { return ex->exiting; });
        continue;
      }
      told_lost = false;
      ex->want_state = true;
      ex->attached = true;
      last_sent = Clock::now();
    }
    std::vector<vl::Event> evs;
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> frs;
    std::string state;
    uint64_t de = 0, df = 0;
    size_t state_pos = 0;
    bool exiting;
    {
      std::unique_lock<std::mutex> lk(ex->mu);
      ex->cv.wait_for(lk, std::chrono::milliseconds(50), [] { return ex->exiting; });
      evs.swap(ex->events); frs.swap(ex->frames); state.swap(ex->state);
      state_pos = ex->state_pos; ex->state_pos = 0;
      de = ex->dropped_events; df = ex->dropped_frames;
      ex->dropped_events = ex->dropped_frames = 0;
      exiting = ex->exiting;
    }
    std::string out;
    bool ok = true;
    // events in messages of about kLineBytes (the first one carries the count dropped before them); the state goes
    // between the events queued before it was taken and those after (the console applies both in order)
    auto send_events = [&](size_t from, size_t to, uint64_t dropped) {
      for (size_t i = from; ok && (i < to || (i == from && dropped)); ) {
        size_t end = i, bytes = 0;                // up to ~kLineBytes of JSON (a packet's bytes are in hex)
        while (end < to && (end == i || bytes < kLineBytes)) {
          bytes += 512 + 2 * evs[end].pkt.size() + evs[end].text.size();
          end++;
        }
        std::vector<vl::Event> chunk(std::make_move_iterator(evs.begin() + i), std::make_move_iterator(evs.begin() + end));
        out = "{\"t\":\"events\",\"dropped\":";
        jnum(out, i == from ? dropped : 0);
        out += ",\"events\":[";
        vl::json::append_events(out, chunk);
        out += "]}\n";
        ok = write_all(fd, out);
        if (end == i) break;                    // only the dropped count
        i = end;
      }
    };
    if (state.empty()) send_events(0, evs.size(), de);
    else {
      send_events(0, std::min(state_pos, evs.size()), de);
      state += '\n';
      if (ok) ok = write_all(fd, state);
      send_events(std::min(state_pos, evs.size()), evs.size(), 0);
    }
    for (size_t i = 0; ok && (i < frs.size() || (i == 0 && df)); ) {
      const size_t from = i;
      out.clear();
      frames_json(out, frs, i, i == 0 ? df : 0);
      ok = write_all(fd, out);
      if (i == from) break;
    }
    if (ok && (!state.empty() || !evs.empty() || !frs.empty())) last_sent = Clock::now();
    if (ok && Clock::now() - last_sent > std::chrono::seconds(1)) { ok = write_all(fd, "{\"t\":\"beat\"}\n"); last_sent = Clock::now(); }
    if (ok && exiting) {
      write_all(fd, "{\"t\":\"bye\",\"reason\":\"exited\"}\n");
      shutdown(fd, SHUT_WR);
      std::lock_guard<std::mutex> lk(ex->mu);
      ex->flushed = true;
      ex->cv.notify_all();
      return;
    }
    if (!ok) {                                  // the console went away: stop capturing, look for it again
      ex->attached = false;
      close(fd);
      fd = -1;
      if (!told_lost) fprintf(stderr, "verbslab: lost the console at %s; trying to attach again\n", ex->path.c_str());
      told_lost = true;
    }
  }
}

// At exit: the events still in the device, then "bye" (a program killed by a signal never gets here: the console
// sees its connection close without a goodbye).
void console_atexit() {
  if (!ex || !ex->attached) return;
  Global& G = g();
  if (G.S) {                                    // the last events, and the state as the program leaves it
    auto lk = lock();
    ex->want_state = true;
    console_collect_locked();
  }
  std::unique_lock<std::mutex> lk(ex->mu);
  ex->exiting = true;
  ex->cv.notify_all();
  ex->cv.wait_for(lk, std::chrono::milliseconds(1000), [] { return ex->flushed; });
}

}  // namespace

bool console_enabled() { return ex != nullptr; }

void console_init() {
  const char* where = std::getenv("VERBSLAB_CONSOLE");
  if (!where || !*where || ex) return;
  ex = new Exporter;
  std::string p = where, dir;
  struct stat st{};
  if (stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) { dir = p; p += "/console.sock"; }
  else dir = p.substr(0, p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/'));
  ex->path = p;
  if (const char* t = std::getenv("VERBSLAB_CONSOLE_TOKEN"); t && *t) ex->token = t;
  else {
    std::ifstream f((dir.empty() ? std::string(".") : dir) + "/console.token");
    std::getline(f, ex->token);
  }
  if (p.size() >= sizeof(sockaddr_un{}.sun_path)) {
    fprintf(stderr, "verbslab: VERBSLAB_CONSOLE=%s: a Unix socket path must be shorter than %zu bytes\n", p.c_str(),
            sizeof(sockaddr_un{}.sun_path));
    return;
  }
  // One attempt now, on the program's thread (ibv_get_device_list / ibv_open_device, not its data path), so a program
  // started with the console running is followed from its first object on; later attempts are the exporter's.
  int fd = -1;
  const int r = connect_console(fd);
  if (r < 0) return;
  if (r > 0) {
    ex->attached = true;
    ex->want_state = true;
    ex->capturing = true;
    g().s->set_event_capture(true);             // from the device's first object on
  }
  ex->thread = std::thread(exporter_main, fd);
  // a forked child has no exporter thread (and must not use the parent's verbs objects): it leaves the console to
  // the parent, and its exit does not wait for a flush
  pthread_atfork(nullptr, nullptr, [] { ex = nullptr; });
  ex->thread.detach();                          // never joined: console_atexit waits for its last flush instead
  std::atexit(console_atexit);
}

void console_collect_locked() {
  if (!ex) return;
  Global& G = g();
  const bool on = ex->attached.load(std::memory_order_acquire);
  if (on != ex->capturing) {                    // attached or lost: the capture follows
    ex->capturing = on;
    if (!G.debug) G.s->set_event_capture(on);
  }
  if (G.udp && on != ex->udp_capturing) { ex->udp_capturing = on; G.udp->set_capture(on); }
  if (!on) return;
  auto evs = G.s->drain_events();
  if (G.debug) debug_print(evs);
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> frs;
  if (G.udp) G.udp->take_capture(frs);
  std::string state;
  const auto now = Clock::now();
  if (ex->want_state.exchange(false) || now - ex->last_state > std::chrono::milliseconds(kStateMs)) {
    state = state_json();
    ex->last_state = now;
  }
  if (evs.empty() && frs.empty() && state.empty()) return;
  std::lock_guard<std::mutex> lk(ex->mu);
  for (auto& e : evs) {
    if (ex->events.size() < kMaxEvents) ex->events.push_back(std::move(e));
    else ex->dropped_events++;
  }
  for (auto& f : frs) {
    if (ex->frames.size() < kMaxFrames) ex->frames.push_back(std::move(f));
    else ex->dropped_frames++;
  }
  if (!state.empty()) { ex->state = std::move(state); ex->state_pos = ex->events.size(); }
}

}  // namespace vlib
