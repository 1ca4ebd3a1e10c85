//===- Watchdog.h - a deadline around blocking collectives ------*- C++ -*-===//
//
// A collective that waits for a peer which died or hangs would block
// forever; the watchdog's thread calls `onTimeout` (which ends the job) when
// one operation runs past the deadline.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_COMM_WATCHDOG_H
#define SNNRT_COMM_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <functional>
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
  };

  double seconds() const { return limit; }

private:
  void loop();
  double limit;
  std::function<void(const std::string &)> onTimeout;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false, armed = false;
  const char *operation = "";
  std::chrono::steady_clock::time_point deadline;
  std::thread thread;
};

} // namespace snnrt

#endif // SNNRT_COMM_WATCHDOG_H
