// mutex.h -- the simulator's mutexes, as capabilities clang's thread-safety analysis knows
// (thread_annotations.h): std::mutex and std::shared_mutex underneath, with the scoped
// guards and the condition variable that go with them.
//
// libstdc++'s std::mutex carries no annotations, so a member guarded by one could not be
// checked; these are thin wrappers that add nothing at run time.
#ifndef RPMA_SIM_COMMON_MUTEX_H_
#define RPMA_SIM_COMMON_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "sim/common/thread_annotations.h"

namespace rpma_sim {

class CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }

  // Tells the analysis the caller holds it, where it cannot see that (a caller that holds
  // another capability known to stand for this mutex). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

  // The std::mutex underneath, for std::lock of several at once (ExecutionLock) and for
  // CondVar. Taking it this way is invisible to the analysis.
  std::mutex& native() { return mutex_; }

 private:
  std::mutex mutex_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_->Lock(); }
  ~MutexLock() RELEASE() { mutex_->Unlock(); }

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mutex_;
};

// Holds a Mutex for its scope, or until Release(): the rest of the scope runs without it.
class SCOPED_CAPABILITY ReleasableMutexLock {
 public:
  explicit ReleasableMutexLock(Mutex* mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_->Lock(); }
  ~ReleasableMutexLock() RELEASE() {
    if (held_) mutex_->Unlock();
  }
  void Release() RELEASE() {
    held_ = false;
    mutex_->Unlock();
  }

  ReleasableMutexLock(const ReleasableMutexLock&) = delete;
  ReleasableMutexLock& operator=(const ReleasableMutexLock&) = delete;

 private:
  Mutex* const mutex_;
  bool held_ = true;
};

// Gives a held Mutex back for its scope (work done without the lock inside a locked one).
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex* mutex) RELEASE(mutex) : mutex_(mutex) { mutex_->Unlock(); }
  ~MutexUnlock() ACQUIRE() { mutex_->Lock(); }

  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex* const mutex_;
};

// A condition variable; each wait names the Mutex the waiter holds (always the same one).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Gives `mutex` back while it waits, and holds it again when it returns.
  void Wait(Mutex* mutex) REQUIRES(mutex) {
    std::unique_lock<std::mutex> held(mutex->native(), std::adopt_lock);
    condition_.wait(held);
    held.release();
  }
  // The same, until `deadline` at the latest; false if it returned because of the deadline.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mutex, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mutex) {
    std::unique_lock<std::mutex> held(mutex->native(), std::adopt_lock);
    const bool woken = condition_.wait_until(held, deadline) == std::cv_status::no_timeout;
    held.release();
    return woken;
  }
  void Signal() { condition_.notify_one(); }
  void SignalAll() { condition_.notify_all(); }

 private:
  std::condition_variable condition_;
};

// A reader-writer mutex.
class CAPABILITY("shared mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }
  void LockShared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void UnlockShared() RELEASE_SHARED() { mutex_.unlock_shared(); }

  // Tells the analysis the caller holds it shared, where it cannot see that (a callback run
  // within the caller's scope). Checks nothing at run time.
  void AssertReaderHeld() const ASSERT_SHARED_CAPABILITY(this) {}

 private:
  std::shared_mutex mutex_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex* mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_->Lock(); }
  ~WriterLock() RELEASE() { mutex_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex* const mutex_;
};

// Holds a SharedMutex shared for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex* mutex) ACQUIRE_SHARED(mutex) : mutex_(mutex) {
    mutex_->LockShared();
  }
  ~ReaderLock() RELEASE() { mutex_->UnlockShared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex* const mutex_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_MUTEX_H_
