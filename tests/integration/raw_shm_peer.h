// raw_shm_peer.h -- the peer of raw_peer.h over shared memory: it creates a segment with the
// simulator's own ShmSegment, offers it in its HELLO (required), and once the server's
// ACCEPT takes it, writes its frames byte by byte into the client-to-server ring (each
// write followed by a DOORBELL frame on TCP) and reads the server's from the other ring,
// polling. It also hands out the segment, for a test that scribbles on it as a peer that
// shares it can.
#ifndef RPMA_SIM_TESTS_INTEGRATION_RAW_SHM_PEER_H_
#define RPMA_SIM_TESTS_INTEGRATION_RAW_SHM_PEER_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/transport/shm_segment.h"
#include "tests/integration/raw_peer.h"

namespace raw_peer {

class ShmPeer : public PeerWire {
 public:
  ShmPeer() = default;
  ~ShmPeer() override;

  // Creates the segment (the default depth's ring size) and connects over TCP. Until
  // UseRings, Send and ReadFrame go over TCP.
  void Connect(const std::string& port);
  // The HELLO body's offer (PROTOCOL.md): offer 1, required 1, the nonce and the name.
  std::vector<uint8_t> Offer() const;
  // After an ACCEPT with shm = 1: frames go through the rings from now on.
  void UseRings() { on_rings_ = true; }
  // Sends a DOORBELL frame on TCP: the server looks at the rings.
  void Ring();
  // Sends `bytes` on the TCP connection, even after UseRings (a peer that breaks the rule
  // that only DOORBELL frames go there once the data path moved to the segment).
  void SendOnTcp(const std::vector<uint8_t>& bytes) { tcp_.Send(bytes); }

  void Send(const std::vector<uint8_t>& bytes) override;
  void ReadFrame(uint16_t* type, std::vector<uint8_t>* body) override;
  // The TCP connection ends (the simulator closes the rings first).
  void ExpectClosed() override;
  // Closes this side's ring, then TCP.
  void Close() override;

  // Truncates the segment to nothing, through an fd opened when it was created (the name is
  // gone once the server opened it), as a same-user peer can.
  void Truncate();

  rpma_sim::ShmSegment& segment() { return *segment_; }
  size_t ring_capacity() const { return ring_capacity_; }

 private:
  RawPeer tcp_;
  std::shared_ptr<rpma_sim::ShmSegment> segment_;
  size_t ring_capacity_ = 0;
  bool on_rings_ = false;
  int fd_ = -1;  // the segment's, for Truncate
};

}  // namespace raw_peer

#endif  // RPMA_SIM_TESTS_INTEGRATION_RAW_SHM_PEER_H_
