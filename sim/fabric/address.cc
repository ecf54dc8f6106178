// address.cc -- getaddrinfo-based resolution and the "does this host own it" check.
#include "sim/fabric/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/common/log.h"

namespace rpma_sim {

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
  return 0;
}

bool SocketAddress::IsWildcard() const {
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(storage).sin_addr.s_addr == htonl(INADDR_ANY);
  if (family() == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr);
  return false;
}

std::string SocketAddress::ToString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(storage).sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr, host,
              sizeof(host));
  }
  return "[" + std::string(host) + "]:" + std::to_string(port());
}

bool SocketAddress::SameHostAndPort(const SocketAddress& other) const {
  if (family() != other.family() || port() != other.port()) return false;
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(storage).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(other.storage).sin_addr.s_addr;
  if (family() == AF_INET6)
    return memcmp(&reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr,
                  &reinterpret_cast<const sockaddr_in6&>(other.storage).sin6_addr,
                  sizeof(in6_addr)) == 0;
  return false;
}

namespace {

// getaddrinfo silently truncates numeric ports above 65535; a TCP port cannot be one.
bool NumericPortOutOfRange(const char* service) {
  if (service == nullptr || *service == '\0') return false;
  unsigned long value = 0;
  for (const char* c = service; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
    value = value * 10 + static_cast<unsigned long>(*c - '0');
    if (value > 65535) return true;  // leading zeros are fine, as getaddrinfo reads them
  }
  return false;
}

}  // namespace

Status ResolveAddress(const char* host, const char* service, AddressUse use, SocketAddress* out) {
  if (NumericPortOutOfRange(service)) {
    SIM_LOG_ERROR("%s is not a valid port", service);
    return Status::kProvider;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = use == AddressUse::kListen ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host, service, &hints, &result);
  if (rc != 0 || result == nullptr) {
    SIM_LOG_ERROR("getaddrinfo(%s, %s): %s", host ? host : "(null)", service ? service : "(null)",
                  gai_strerror(rc));
    return Status::kProvider;
  }
  memcpy(&out->storage, result->ai_addr, result->ai_addrlen);
  out->length = result->ai_addrlen;
  freeaddrinfo(result);
  return Status::kOk;
}

bool HostOwnsAddress(const SocketAddress& address) {
  int fd = socket(address.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  SocketAddress probe = address;
  if (probe.family() == AF_INET)
    reinterpret_cast<sockaddr_in&>(probe.storage).sin_port = 0;
  else
    reinterpret_cast<sockaddr_in6&>(probe.storage).sin6_port = 0;
  bool owned = bind(fd, reinterpret_cast<const sockaddr*>(&probe.storage), probe.length) == 0;
  close(fd);
  return owned;
}

}  // namespace rpma_sim
