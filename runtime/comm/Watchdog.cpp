//===- Watchdog.cpp - a deadline around blocking collectives --------------===//

#include "Watchdog.h"

#include <cstdio>

namespace snnrt {

Watchdog::Watchdog(double seconds,
                   std::function<void(const std::string &)> onTimeout)
    : limit(seconds), onTimeout(std::move(onTimeout)) {
  if (limit > 0)
    thread = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  if (thread.joinable())
    thread.join();
}

Watchdog::Scope::Scope(Watchdog &dog, const char *what) : dog(dog) {
  if (dog.limit <= 0)
    return;
  std::lock_guard<std::mutex> lock(dog.mutex);
  id = dog.nextId++;
  dog.armed[id] = {std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<
                           std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(dog.limit)),
                   what};
  dog.wake.notify_all();
}

Watchdog::Scope::~Scope() {
  if (dog.limit <= 0)
    return;
  std::lock_guard<std::mutex> lock(dog.mutex);
  dog.armed.erase(id);
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    if (armed.empty()) {
      wake.wait(lock);
      continue;
    }
    // Scopes are armed in id order with the same limit: the oldest expires
    // first.
    auto oldest = armed.begin();
    uint64_t id = oldest->first;
    auto until = oldest->second.first;
    const char *operation = oldest->second.second;
    if (wake.wait_until(lock, until) != std::cv_status::timeout)
      continue; // disarmed, re-armed or stopping: look again
    if (!stopping && armed.count(id) &&
        std::chrono::steady_clock::now() >= until) {
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "%s did not finish within %g s (--comm-timeout): a peer "
                    "rank stopped, failed or hangs; ending the job",
                    operation, limit);
      onTimeout(msg);
      return;
    }
  }
}

} // namespace snnrt
