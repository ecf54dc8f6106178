// address.h -- resolving the addresses and ports that librpma takes as strings.
//
// The simulator's connection manager identifies endpoints by real IP addresses and TCP
// ports, so resolution behaves as rdma_getaddrinfo does: names, numeric addresses and
// service names resolve; anything else fails (librpma: RPMA_E_PROVIDER).
#ifndef RPMA_SIM_FABRIC_ADDRESS_H_
#define RPMA_SIM_FABRIC_ADDRESS_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "sim/common/status.h"

namespace rpma_sim {

// An IPv4 or IPv6 socket address.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  bool IsWildcard() const;       // 0.0.0.0 or ::
  std::string ToString() const;  // "1.2.3.4:port" or "[::1]:port"
  bool SameHostAndPort(const SocketAddress& other) const;
};

// What an address is resolved for: to connect to, or to listen on (AI_PASSIVE: an address of
// this host, the wildcard for none).
enum class AddressUse { kConnect, kListen };

// Resolves `host` and `service` (either may be NULL) to the first address getaddrinfo
// returns for `use`. Returns kProvider when resolution fails.
Status ResolveAddress(const char* host, const char* service, AddressUse use, SocketAddress* out);

// True if this host owns `address` (a socket can be bound to it); wildcards count as owned.
bool HostOwnsAddress(const SocketAddress& address);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_ADDRESS_H_
