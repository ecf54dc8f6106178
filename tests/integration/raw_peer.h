// raw_peer.h -- a peer that speaks rpma-sim's wire protocol (sim/transport/PROTOCOL.md) byte
// by byte over a plain TCP socket, for the tests that send the simulator what its own code
// never would: malformed_peer_test (before and during the handshake) and hostile_peer_test
// (after a valid one). Also the check both end with: a normal client still gets served.
#ifndef RPMA_SIM_TESTS_INTEGRATION_RAW_PEER_H_
#define RPMA_SIM_TESTS_INTEGRATION_RAW_PEER_H_

#include <librpma.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace raw_peer {

constexpr uint32_t kMagic = 0x4d535052;
constexpr uint16_t kVersion = 8;
enum FrameType : uint16_t {
  kHello = 1,
  kAccept = 2,
  kReject = 3,
  kDisconnect = 4,
  kRequest = 5,
  kResponse = 6,
  kDoorbell = 7,
  kPlaced = 8,
};
constexpr size_t kHeaderSize = 16;

// Appends `value` as `bytes` little-endian bytes.
void PutLe(std::vector<uint8_t>* out, uint64_t value, int bytes);

// A 16-byte frame header: magic, version, type, body length, reserved.
std::vector<uint8_t> Header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length);

// A whole frame of this protocol version: header and body.
std::vector<uint8_t> Frame(uint16_t type, const std::vector<uint8_t>& body);

// A REQUEST body (PROTOCOL.md): the fields, then `bytes` (a write's or send's payload).
struct Request {
  uint64_t sequence = 0;
  uint8_t opcode = 0;  // 0 write, 1 read, 2 atomic write, 3 flush, 4 send
  uint8_t with_imm = 0;
  uint8_t flush_type = 0;
  uint8_t flags = 0;
  uint32_t imm = 0;
  uint32_t rkey = 0;
  uint64_t address = 0;
  uint64_t length = 0;
  uint64_t atomic_value = 0;
  std::vector<uint8_t> bytes;
};
std::vector<uint8_t> RequestBody(const Request& request);

// The peer's end of one connection, byte by byte, with gtest assertions. Use the methods
// that assert with ASSERT_NO_FATAL_FAILURE.
class PeerWire {
 public:
  virtual ~PeerWire() = default;
  // Sends all of `bytes` (the simulator may close early: that ends the sending but is no
  // failure).
  virtual void Send(const std::vector<uint8_t>& bytes) = 0;
  // Reads one frame (safety timeout); its type and body.
  virtual void ReadFrame(uint16_t* type, std::vector<uint8_t>* body) = 0;
  // Expects the simulator to close the connection within the safety timeout. Bytes it sends
  // first are reported, not failed on.
  virtual void ExpectClosed() = 0;
  // Hangs up.
  virtual void Close() = 0;
};

// A plain TCP connection to 127.0.0.1:port.
class RawPeer : public PeerWire {
 public:
  RawPeer() = default;
  ~RawPeer() override;
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  void Connect(const std::string& port);
  // EPIPE and ECONNRESET end the sending.
  void Send(const std::vector<uint8_t>& bytes) override;
  void ReadFrame(uint16_t* type, std::vector<uint8_t>* body) override;
  // recv returns 0 or fails.
  void ExpectClosed() override;
  void Close() override;

 private:
  int fd_ = -1;
};

// A normal client connects to `ep` (listening on 127.0.0.1:port with `peer`), writes into
// the server's memory, reads it back and disconnects: the process still serves.
void ExpectNormalConnectionWorks(rpma_peer* peer, rpma_ep* ep, const std::string& port);

}  // namespace raw_peer

#endif  // RPMA_SIM_TESTS_INTEGRATION_RAW_PEER_H_
