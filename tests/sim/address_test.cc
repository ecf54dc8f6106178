// Tests of address resolution (sim/fabric/address): ResolveAddress, SocketAddress and
// HostOwnsAddress.
#include "sim/fabric/address.h"

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

void SilentLogFunction(LogLevel, const char*, int, const char*, const char*, ...) {}

// Expected resolution failures log errors; keep them out of syslog.
class AddressTest : public ::testing::Test {
 protected:
  void SetUp() override { LogSetFunction(&SilentLogFunction); }
  void TearDown() override { LogSetFunction(nullptr); }

  static SocketAddress Resolve(const char* host, const char* service,
                               AddressUse use = AddressUse::kConnect) {
    SocketAddress address;
    EXPECT_EQ(Status::kOk, ResolveAddress(host, service, use, &address))
        << (host ? host : "(null)") << " " << (service ? service : "(null)");
    return address;
  }
};

TEST_F(AddressTest, NumericIpv4AndPort) {
  SocketAddress address = Resolve("127.0.0.1", "7204");
  EXPECT_EQ(AF_INET, address.family());
  EXPECT_EQ(sizeof(sockaddr_in), address.length);
  EXPECT_EQ(7204, address.port());
  EXPECT_EQ("127.0.0.1:7204", address.ToString());
  EXPECT_FALSE(address.IsWildcard());
}

TEST_F(AddressTest, LocalhostResolvesToLoopback) {
  SocketAddress address = Resolve("localhost", "7204");
  EXPECT_EQ(7204, address.port());
  if (address.family() == AF_INET) {
    const in_addr& ip = reinterpret_cast<const sockaddr_in&>(address.storage).sin_addr;
    EXPECT_EQ(127u, ntohl(ip.s_addr) >> 24) << address.ToString();
  } else {
    ASSERT_EQ(AF_INET6, address.family());
    EXPECT_TRUE(
        IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(address.storage).sin6_addr))
        << address.ToString();
  }
}

TEST_F(AddressTest, HighestPortResolves) { EXPECT_EQ(65535, Resolve("127.0.0.1", "65535").port()); }

TEST_F(AddressTest, NumericPortAbove65535IsProvider) {
  SocketAddress address;
  for (const char* port : {"65536", "70000", "99999", "123456", "4294967376"})
    EXPECT_EQ(Status::kProvider, ResolveAddress("127.0.0.1", port, AddressUse::kConnect, &address))
        << port;
}

TEST_F(AddressTest, NumericPortWithLeadingZerosIsAccepted) {
  // getaddrinfo (and so rdma_getaddrinfo) reads "000080" as port 80.
  SocketAddress address;
  ASSERT_EQ(Status::kOk, ResolveAddress("127.0.0.1", "000080", AddressUse::kConnect, &address));
  EXPECT_EQ(80, address.port());
}

TEST_F(AddressTest, NonNumericUnknownPortIsProvider) {
  SocketAddress address;
  EXPECT_EQ(Status::kProvider, ResolveAddress("127.0.0.1", "abc", AddressUse::kConnect, &address));
}

TEST_F(AddressTest, UnresolvableHostIsProvider) {
  SocketAddress address;
  EXPECT_EQ(Status::kProvider,
            ResolveAddress("no-such-host.invalid", "7204", AddressUse::kConnect, &address));
}

TEST_F(AddressTest, PassiveWithoutHostIsTheWildcard) {
  SocketAddress address = Resolve(nullptr, "7204", AddressUse::kListen);
  EXPECT_TRUE(address.IsWildcard()) << address.ToString();
  EXPECT_EQ(7204, address.port());
  EXPECT_TRUE(HostOwnsAddress(address));
}

TEST_F(AddressTest, ExplicitWildcards) {
  EXPECT_TRUE(Resolve("0.0.0.0", "1").IsWildcard());
  EXPECT_TRUE(Resolve("::", "1").IsWildcard());
  EXPECT_FALSE(Resolve("::1", "1").IsWildcard());
}

TEST_F(AddressTest, Ipv6ToStringUsesBrackets) {
  SocketAddress address = Resolve("::1", "7204");
  EXPECT_EQ(AF_INET6, address.family());
  EXPECT_EQ(7204, address.port());
  EXPECT_EQ("[::1]:7204", address.ToString());
}

TEST_F(AddressTest, SameHostAndPort) {
  SocketAddress a = Resolve("127.0.0.1", "7204");
  EXPECT_TRUE(a.SameHostAndPort(Resolve("127.0.0.1", "7204")));
  EXPECT_FALSE(a.SameHostAndPort(Resolve("127.0.0.1", "7205")));
  EXPECT_FALSE(a.SameHostAndPort(Resolve("127.0.0.2", "7204")));
  EXPECT_FALSE(a.SameHostAndPort(Resolve("::1", "7204")));
  SocketAddress v6 = Resolve("::1", "7204");
  EXPECT_TRUE(v6.SameHostAndPort(Resolve("::1", "7204")));
  EXPECT_FALSE(v6.SameHostAndPort(Resolve("::1", "7205")));
  EXPECT_FALSE(v6.SameHostAndPort(Resolve("::2", "7204")));
}

TEST_F(AddressTest, HostOwnsLoopback) {
  EXPECT_TRUE(HostOwnsAddress(Resolve("127.0.0.1", "7204")));
}

TEST_F(AddressTest, HostDoesNotOwnADocumentationAddress) {
  EXPECT_FALSE(HostOwnsAddress(Resolve("192.0.2.1", "7204")));  // TEST-NET-1, RFC 5737
}

}  // namespace
}  // namespace rpma_sim
