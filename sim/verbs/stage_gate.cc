// stage_gate.cc -- holds, their timers on the progress engine, and the process's gate.
#include "sim/verbs/stage_gate.h"
#include "sim/common/mutex.h"

#include <boost/asio/post.hpp>

#include "sim/fabric/io_service.h"
#include "sim/verbs/direct_target.h"

namespace rpma_sim {

GateSlot<StageGate> g_stage_gate_slot;

void SetStageGate(std::shared_ptr<StageGate> gate) {
  g_stage_gate_slot.Set(std::move(gate));
  DirectTarget::RefreshAll();
}

std::shared_ptr<StageHold> CheckStage(const StagePoint& point) {
  std::shared_ptr<StageGate> gate = g_stage_gate_slot.Get();
  return gate ? gate->Check(point) : nullptr;
}

std::shared_ptr<StageHold> StageHold::UntilReleased() {
  return std::shared_ptr<StageHold>(new StageHold(Then::kGoOn));
}

std::shared_ptr<StageHold> StageHold::Until(std::chrono::steady_clock::time_point deadline,
                                            Then then) {
  std::shared_ptr<StageHold> hold(new StageHold(then));
  // The engine keeps the hold alive until its time: nobody else needs to.
  RunAt(deadline, [hold] { hold->Release(); });
  return hold;
}

void StageHold::Release() {
  std::vector<std::function<void()>> waiters;
  {
    MutexLock lock(&mutex_);
    if (released_.load(std::memory_order_relaxed)) return;
    released_.store(true, std::memory_order_release);
    waiters.swap(waiters_);
  }
  if (waiters.empty()) return;
  EnsureProgressEngine();
  for (auto& resume : waiters) boost::asio::post(IoContext(), std::move(resume));
}

void StageHold::OnRelease(std::function<void()> resume) {
  {
    MutexLock lock(&mutex_);
    if (!released_.load(std::memory_order_relaxed)) {
      waiters_.push_back(std::move(resume));
      return;
    }
  }
  EnsureProgressEngine();
  boost::asio::post(IoContext(), std::move(resume));
}

}  // namespace rpma_sim
