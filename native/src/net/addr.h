// Socket-address helpers shared by the UDP transport's files (internal to native/src/net).
#pragma once
#include "net/udp.h"

namespace vl::net {

socklen_t to_sockaddr(const IpAddr& ip, uint16_t port, sockaddr_storage& ss);
bool from_sockaddr(const sockaddr* sa, IpAddr& ip, uint16_t& port);   // false: not AF_INET / AF_INET6
bool link_local(const IpAddr& ip);                                      // fe80::/10
bool same_ip(const IpAddr& x, const IpAddr& y);

}  // namespace vl::net
