//===- Watchdog.h - a deadline around blocking collectives ------*- C++ -*-===//
//
// A collective that waits for a peer which died or hangs would block
// forever; the watchdog's thread calls `onTimeout` (which ends the job) when
// one operation runs past the deadline. Scopes may overlap (threads that
// use disjoint groups of one communicator's peers at once): each has its
// own deadline.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_COMM_WATCHDOG_H
#define SNNRT_COMM_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace snnrt {

class Watchdog {
public:
  /// `seconds` <= 0: no deadline and no thread.
  Watchdog(double seconds, std::function<void(const std::string &)> onTimeout);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Arms the deadline for one blocking operation named `what`.
  class Scope {
  public:
    Scope(Watchdog &dog, const char *what);
    ~Scope();

  private:
    Watchdog &dog;
    uint64_t id = 0;
  };

  double seconds() const { return limit; }

private:
  void loop();
  double limit;
  std::function<void(const std::string &)> onTimeout;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  uint64_t nextId = 0;
  /// The armed scopes: id -> (deadline, operation).
  std::map<uint64_t, std::pair<std::chrono::steady_clock::time_point,
                               const char *>>
      armed;
  std::thread thread;
};

} // namespace snnrt

#endif // SNNRT_COMM_WATCHDOG_H
