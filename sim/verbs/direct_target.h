// direct_target.h -- this process's side of direct access: the regions a connection's peer
// may write and read itself (through the segment's DirectArea, transport/direct_area.h),
// kept in step with registrations, and the placements it reports.
//
// A connection over shared memory whose peer can reach this process's memory (process_vm)
// lets the peer execute writes and reads without this side's threads, as RDMA hardware
// does. Direct access is open while the queue pair is connected, no stage gate is installed
// (fault rules act at kExecute here: with one, every request comes the usual way and meets
// them) and the node is not armed for a power failure (an armed node saves the bytes a
// placement covers before they change, which only this side can do). Deregistering a region
// waits for accesses under way, so that after rpma_mr_dereg no access lands; closing waits a
// millisecond for them and leaves a longer wait to the progress engine's timer. The peer's
// placement records reach the persistence model before this side executes anything else of the
// connection (a flush among them), when a region goes, and when the connection ends.
#ifndef RPMA_SIM_VERBS_DIRECT_TARGET_H_
#define RPMA_SIM_VERBS_DIRECT_TARGET_H_

#include <stdint.h>

#include <chrono>
#include <memory>

#include "sim/common/mutex.h"
#include "sim/transport/shm_segment.h"

namespace rpma_sim {

class ProtectionDomain;
struct MemoryRegion;

class DirectTarget : public std::enable_shared_from_this<DirectTarget> {
 public:
  // Publishes the regions of `pd` in `segment`'s own area for the queue pair `qp_num`,
  // still closed.
  static std::shared_ptr<DirectTarget> Start(std::shared_ptr<ShmSegment> segment,
                                             ProtectionDomain* pd, uint32_t qp_num);
  ~DirectTarget();

  DirectTarget(const DirectTarget&) = delete;
  DirectTarget& operator=(const DirectTarget&) = delete;

  // The queue pair is connected: direct access opens unless something forbids it.
  void SetConnected();
  // For good (the queue pair is in error or destroyed): closes at once (the peer begins no
  // access from now on), waits a millisecond at most for the accesses under way (an honest
  // peer's ends within microseconds), and hands the last placements to the persistence
  // model. An access the peer holds longer is not waited for by the caller, which is often
  // the engine itself under a queue pair's lock (every other connection would wait with it):
  // the engine's timer looks again every millisecond and, past kIdleTimeout, gives up on it
  // as WaitIdle does (what it moved does not count). Its placement was recorded, and taken
  // here, before its bytes moved; a record the peer keeps claimed is not taken.
  // Deregistration still waits for it, so nothing lands after rpma_mr_dereg.
  void Close();
  // Hands the placements the peer recorded since the last call to the persistence model;
  // those in `going` (a region leaving the table) too.
  void TakePlacements(const MemoryRegion* going = nullptr);

  // Every DirectTarget of the process:
  // a region was registered: those of its domain publish it.
  static void Registered(const MemoryRegion& region);
  // deregisters `region` (MemoryRegionTable::Deregister): withdrawn from every target,
  // accesses under way waited for, its placements taken. After this returns no direct
  // access to it lands.
  static void Deregister(const std::shared_ptr<MemoryRegion>& region);
  // a stage gate was installed or removed, or a node armed: each opens or closes again.
  static void RefreshAll();
  // the persistence model is about to report: every placement recorded is taken.
  static void TakeAllPlacements();

 private:
  DirectTarget(std::shared_ptr<ShmSegment> segment, ProtectionDomain* pd, uint32_t qp_num);

  // Opens or closes as the state says.
  void Refresh();
  // Waits for accesses under way (logged if the peer holds one for too long; at once, once
  // it gave up).
  void WaitIdle();
  // Whether no access is under way within `timeout` (at once if the peer was given up on,
  // or its process is gone).
  bool IdleWithin(std::chrono::milliseconds timeout);
  // An access outlasted kIdleTimeout: logged, and what the peer moves from now on does not
  // count (DirectArea::kGaveUp).
  void GiveUp();
  // Close's beginning: false if it was closed already.
  bool BeginClose();
  // Close's end: the last placements taken; the domain is not touched after.
  void FinishClose();
  // On the engine's timer, every kCloseWait until no access is under way, or GiveUp once
  // `deadline` passed.
  static void GiveUpUnlessIdleBy(std::shared_ptr<DirectTarget> target,
                                 std::chrono::steady_clock::time_point deadline);
  // Stores the area's opening: open or closed, or kGaveUp for good once WaitIdle gave up.
  void StoreOpenLocked(bool open) REQUIRES(mutex_);

  const std::shared_ptr<ShmSegment> segment_;
  DirectArea& area_;
  ProtectionDomain* const pd_;  // only until finished: a finished target touches no domain
  const uint32_t qp_num_;
  // Guards the area's table and opening, the flags, and taking placements.
  Mutex mutex_;
  bool connected_ GUARDED_BY(mutex_) = false;
  bool closed_ GUARDED_BY(mutex_) = false;    // no access begins from now on
  bool finished_ GUARDED_BY(mutex_) = false;  // the last placements taken (FinishClose)
  bool gave_up_ GUARDED_BY(mutex_) = false;   // an access outlasted WaitIdle: closed for good
  // What TakePlacements may still spend waiting for records the peer is growing, in yields of
  // the core: an honest initiator holds one for a few stores, so this is hardly touched; a
  // peer that keeps one held gets kPlacementYields a second of the engine's time, no more.
  static constexpr uint32_t kPlacementYields = 1000;
  uint32_t placement_yields_ GUARDED_BY(mutex_) = kPlacementYields;
  std::chrono::steady_clock::time_point placement_yields_since_ GUARDED_BY(mutex_);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_DIRECT_TARGET_H_
