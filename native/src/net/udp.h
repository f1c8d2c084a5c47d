// RoCEv2 over real UDP sockets (IPv4 and IPv6) for a software device, and the host-interface GID table.
//
// A device attached to a UdpTransport sends its QPs' packets to the remote host named by the QP's dgid
// (IPv4-mapped ::ffff:a.b.c.d or IPv6) from a socket bound to the address of the QP's sgid_index, UDP
// destination port 4791 (configurable for tests). The ICRC is computed over the IP/UDP header the kernel writes:
// unconnected socket, IP_PMTUDISC_DO (DF set, so Linux writes IPv4 ID 0), TTL/ToS/flow label masked anyway.
// Received datagrams are ICRC-checked against the header rebuilt from recvmsg's source address and the socket's
// bound address (UDP checksum 0 is accepted: by the kernel for IPv4, through UDP_NO_CHECK6_RX for IPv6, as Linux
// rxe sends it; our own datagrams carry the checksum the kernel computes). The engine runs in real time: poll() sets the
// session clock from CLOCK_MONOTONIC and runs the due actions (requester, ACK/RNR timers), so retransmission
// and RNR behave as in-process. Single-threaded: poll() and the verbs calls of that session run on one thread.
// Destroy the transport before its session. Events: PacketSent/PacketReceived/PacketDropped as in-process, with
// d = 0 (the remote host is not a device of this session); Session::write_pcap() does not include this traffic,
// UdpTransport::write_pcap() does (real IP/UDP headers). UD QPs are carried through address handles that name a GID
// (Session::create_ah_remote); the receive buffer's 40-byte GRH slot holds the datagram's real IP header.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/impl.h"
#include "vl/session.h"

namespace vl::net {

// ---- addresses and GIDs
struct IpAddr {
  bool v6 = false;
  uint8_t a[16] = {};          // IPv4 in a[0..3]
  uint32_t scope_id = 0;       // IPv6 link-local interface index
};
// GID -> address: ::ffff:a.b.c.d is IPv4, anything else non-zero is IPv6. False for the zero GID.
bool gid_to_ip(const uint8_t gid[16], IpAddr& out);
void ip_to_gid(const IpAddr& ip, uint8_t gid[16]);
std::string gid_text(const uint8_t gid[16]);                 // inet_ntop(AF_INET6) of the 16 bytes
std::string ip_text(const IpAddr& ip);
// Numeric IPv4 / IPv6 literal (IPv6 may carry %ifname or %index). Refuses host names.
Result<IpAddr> parse_ip(const std::string& text);

// ---- host interfaces (getifaddrs), soft-RoCE GID order
struct Interface {
  std::string name;
  uint32_t index = 0, mtu = 0;
  uint8_t mac[6] = {};
  bool up = false, loopback = false;
  std::vector<IpAddr> addrs;   // getifaddrs order
};
std::vector<Interface> interfaces();
Result<Interface> find_interface(const std::string& name);
Result<Interface> interface_with_address(const IpAddr& ip);   // the interface that owns ip
// rxe's GID table for a netdev: index 0 = link-local fe80::/64 + EUI-64 of the MAC (ib_core's default GID),
// then the IPv4 addresses as IPv4-mapped GIDs, then the other IPv6 addresses. All "RoCE v2".
std::vector<GidEntry> roce_gid_table(const Interface& ifc);
// rxe's active_mtu for a netdev MTU: the largest IB MTU (256..4096) that fits after RoCEv2 headers.
uint32_t roce_active_mtu(uint32_t netdev_mtu);

// IPv4 peers that do not send ID 0 (kernel rxe increments the IP ID per packet): find the ID that makes the ICRC
// check out, using the CRC's linearity (icrc(id) = icrc(0) ^ L(id), L linear, 16 unknowns, 32 equations). Sets
// f.ip_id and returns true when one exists. This spends 16 of the ICRC's 32 bits on the unknown ID, so it is only
// tried after the check with ID 0 failed.
bool recover_ipv4_id(wire::Framing& f, const uint8_t* udp_payload, size_t len);

struct UdpOptions {
  std::string interface;       // attach to this host interface (GID table from its addresses), or
  std::string address;         // to one local address: GID table = [default link-local GID, this address]
  uint16_t port = wire::kRoceUdpPort;   // local UDP port of every GID's socket; 0 = an ephemeral port (tests)
  uint16_t peer_port = 0;      // UDP destination port; 0 = same as port (4791 on a real network)
  bool busy_poll = false;      // poll() spins instead of sleeping in ppoll (benchmarks)
  // UDP GSO (UDP_SEGMENT cmsg, Linux 4.18): consecutive equal-size packets to one peer leave in one send. Turned off
  // for good by the first send the kernel refuses (EINVAL / ENOPROTOOPT / EIO); that group goes out packet by packet.
  bool gso = true;
  // UDP GRO (UDP_GRO sockopt, Linux 5.0): the kernel may hand over several datagrams coalesced in one buffer
  // (segment size in the UDP_GRO cmsg); receive() splits it and checks each datagram's ICRC on its own.
  bool gro = true;
  // Zero copy: a payload that lies in an MR (and >= 1 KiB) is handed to the kernel from there by its own iovec; only
  // the headers and pad + ICRC are built (wire::encode_split, the ICRC reads the payload in place). Never while a
  // capture or event recording needs the packet's bytes in one piece. See docs/udp-perf.md for what it gives.
  bool zero_copy = false;
  // The IPv4 IDs a received datagram's ICRC is checked with (net/ipv4_id.h): false (default) = those a sender that
  // frames as this transport does can produce (0, or a GSO segment's index: at most 64 candidates); true = any ID,
  // for a peer whose IP stack picks them (kernel rxe, ip_select_ident), at the price of 16 of the ICRC's 32 bits.
  bool any_ipv4_id = false;
};

struct UdpStats {
  uint64_t tx_packets = 0, tx_bytes = 0, rx_packets = 0, rx_bytes = 0;
  uint64_t rx_dropped = 0;     // malformed / bad ICRC / unknown QP / truncated
  uint64_t tx_dropped = 0;     // no socket for the sgid, bad dgid, send error
  uint64_t tx_injected_loss = 0, tx_injected_dup = 0;
  uint64_t syscalls_tx = 0, syscalls_rx = 0;
  // which path carried the packets (docs/udp-perf.md): tx_packets = tx_gso_segments + packets sent one per datagram
  uint64_t tx_gso_sends = 0, tx_gso_segments = 0;   // super-buffers handed to the kernel, packets in them
  uint64_t rx_gro_buffers = 0, rx_gro_segments = 0; // coalesced buffers received (more than one datagram), datagrams in them
  uint64_t tx_zero_copy = 0;                        // packets whose payload went to the kernel from the MR (UdpOptions::zero_copy)
  bool gso = false, gro = false;                    // in use now (asked for and accepted by the kernel)
  int gso_fallback_errno = 0;                       // the error that turned GSO off (0: never)
};

// What an attach failure is about, so that a caller names the field without reading the message
// (device.attachNet's args.<field>); names in kUdpFieldNames.
enum class UdpField : uint8_t { Device = 0, Session = 1, Options = 2, Interface = 3, Address = 4, Port = 5 };
inline constexpr const char* kUdpFieldNames[] = {"device", "session", "options", "interface", "address", "port"};

class UdpTransport : public WirePort {
 public:
  // Binds one socket per usable GID and sets the device's GID table (and active_mtu from the interface MTU).
  // The session must not be in free-running mode (the transport drives its engine in real time). On failure
  // *bad (when given) says which input was at fault.
  static Result<std::unique_ptr<UdpTransport>> attach(Session& s, Handle dev, const UdpOptions& o, UdpField* bad = nullptr);
  ~UdpTransport() override;                  // detaches the device (its packets go nowhere afterwards)
  UdpTransport(const UdpTransport&) = delete;
  UdpTransport& operator=(const UdpTransport&) = delete;

  // Receive pending datagrams, run every engine action that is due in real time, send what they produced.
  // Waits up to timeout_ns (0: do not wait) for a datagram or a timer when there was nothing to do.
  // Returns the number of datagrams received plus engine actions run.
  size_t poll(int64_t timeout_ns);

  const std::vector<GidEntry>& gids() const { return gids_; }
  const std::string& interface_name() const { return ifname_; }
  uint16_t port() const { return port_; }
  void set_peer_port(uint16_t p) { peer_port_ = p ? p : port_; }
  const UdpStats& stats() const { return stats_; }
  // The bound sockets, for a caller that sleeps in poll()/epoll itself between two poll(0) calls (native/libibverbs).
  std::vector<int> fds() const { std::vector<int> v; for (auto& k : socks_) v.push_back(k.fd); return v; }
  // Keep every datagram sent and received (with its real IP/UDP framing) for write_pcap().
  void set_capture(bool on) { capture_ = on; }
  Status write_pcap(const std::string& path) const;
  // Hands over the datagrams kept since the last call, each framed as write_pcap() writes it (Ethernet, the real
  // IP/UDP headers), with its time, and forgets them: for a caller that streams the capture elsewhere
  // (native/libibverbs/console.cpp sends it to a console).
  void take_capture(std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& out);

  void transmit(Qp& q, wire::Packet& p, bool payload_in_memory) override;
  void transmit_gmp(wire::Packet& p, uint32_t sgid_index, const uint8_t dgid[16]) override;

 private:
  UdpTransport(Session& s, Handle dev) : s_(s), S_(s.internals()), dev_(dev) {}
  struct Sock { int fd = -1; IpAddr ip; uint32_t gid_index = 0; };
  // One packet to send. GSO groups are formed as packets are queued (the ICRC of an IPv4 packet covers the IP ID,
  // which the kernel's segmentation writes as ID + index, so a packet's place in its group is known when it is
  // encoded): seg 0 starts a datagram or a group, seg k > 0 is the k-th packet of the group started before it.
  struct Tx {
    int sock = 0; sockaddr_storage to{}; socklen_t tolen = 0; std::vector<uint8_t> buf;
    size_t len = 0;                            // packet bytes: buf, or hdr + zc + tail when zc is set
    const uint8_t* zc = nullptr; size_t zc_len = 0, hl = 0, tl = 0;   // zero copy: payload in the MR
    uint8_t hdr[wire::kMaxHeaderLen], tail[8];
    uint16_t seg = 0; bool closed = false;     // closed: a shorter last segment, nothing may join after it
    wire::Framing f; size_t rec = SIZE_MAX;    // framing the ICRC was computed over; capture record (recs_ index)
  };
  struct Rec { uint64_t t; wire::Framing f; std::vector<uint8_t> pkt; };
  void sync_clock();
  size_t run_due();
  void flush();
  void send_run(int sk, size_t first, size_t end);   // txq_[first, end): one socket's packets, one sendmmsg per 64
  void gso_off(size_t first, size_t end, int e);      // the kernel refused a GSO send: re-frame those packets singly
  size_t receive(Sock& k);
  void receive_datagram(Sock& k, const IpAddr& src, uint16_t sport, const uint8_t* data, size_t n, uint16_t seg);
  void drop_rx(const std::string& why, const uint8_t* p, size_t n);
  void drop_tx(Handle obj, const char* kind, const wire::Packet& p, const std::string& why);
  // one packet from the socket of GID gi to the host of dgid (transmit: a QP's; transmit_gmp: the CM's, obj 0)
  void send_to(Handle obj, const char* kind, wire::Packet& p, uint32_t gi, const uint8_t* dgid, bool payload_in_memory);
  wire::Framing framing_for(const Sock& k, const IpAddr& peer, uint16_t sport, uint16_t dport) const;

  Session& s_;
  SessionImpl& S_;
  Handle dev_;
  std::string ifname_;
  uint16_t port_ = wire::kRoceUdpPort, peer_port_ = wire::kRoceUdpPort;
  bool busy_ = false, capture_ = false, gso_ = false, gro_ = false, zero_copy_ = false, any_ipv4_id_ = false;
  int rx_prev_id_ = -1;                       // the IPv4 ID of the datagram before, in the buffer being received
  size_t rx_slot_ = 0;
  int64_t base_ = 0;                         // CLOCK_MONOTONIC ns at session time 0
  int64_t last_work_ = 0;                    // CLOCK_MONOTONIC ns of the last poll() that did something
  std::vector<GidEntry> gids_;
  std::vector<Sock> socks_;
  std::vector<int> sock_of_gid_;             // gid index -> socks_ index or -1
  std::vector<Tx> txq_;
  size_t ntx_ = 0;
  std::vector<uint8_t> rxbuf_;
  // recvmmsg's headers, kept between calls: only those the kernel wrote into are set up again, so an empty poll
  // (the common case while spinning) costs the system call alone
  struct RxCtl { alignas(cmsghdr) char b[CMSG_SPACE(sizeof(int))]; };
  std::vector<mmsghdr> rxh_;
  std::vector<iovec> rxiov_;
  std::vector<sockaddr_storage> rxfrom_;
  std::vector<RxCtl> rxctl_;
  size_t rx_dirty_ = 0;                      // rxh_[0, rx_dirty_) need setting up
  std::vector<uint8_t> pktbuf_;
  std::vector<Rec> recs_;
  UdpStats stats_;
};

}  // namespace vl::net
