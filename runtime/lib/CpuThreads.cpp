//===- CpuThreads.cpp - a small persistent pool for the CPU kernels -------===//
//
// Workers sleep on a condition variable between calls (a kernel call is tens
// of microseconds or more; waking costs a few). Chunk c always runs items
// getChunkRange(items, chunks, c): the split depends only on the item count,
// the grain and the thread count.
//
//===----------------------------------------------------------------------===//

#include "snnrt/CpuThreads.h"

#include "snnrt/Error.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// OpenBLAS's thread count, when OpenBLAS is the BLAS linked in.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace snnrt {
namespace {

int availableCores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

int threadsFromEnvironment() {
  const char *env = std::getenv("SNN_NUM_THREADS");
  if (!env || !*env)
    return 0;
  char *end = nullptr;
  long n = std::strtol(env, &end, 10);
  if (*end || n < 1 || n > 4096)
    throw Error(std::string("SNN_NUM_THREADS must be a positive thread "
                            "count, got '") + env + "'");
  return static_cast<int>(n);
}

class Pool {
public:
  ~Pool() { resize(0); }

  int size() const { return static_cast<int>(workers.size()) + 1; }

  /// Keeps `threads - 1` workers (the caller is the other thread).
  void resize(int threads) {
    std::lock_guard<std::mutex> busy(callMutex);
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      ++generation;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
    workers.clear();
    stopping = false;
    // A new worker waits for the next generation from this one on.
    uint64_t start = generation;
    for (int w = 1; w < threads; ++w)
      workers.emplace_back([this, w, start] { work(w, start); });
  }

  /// Runs `chunks` chunks of `items`, the caller the first; false when the
  /// pool is busy (the caller then runs everything).
  bool run(int64_t items, int64_t chunks,
           const std::function<void(int64_t, int64_t)> &body) {
    std::unique_lock<std::mutex> busy(callMutex, std::try_to_lock);
    if (!busy.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      job = {&body, items, chunks};
      pending = static_cast<int>(chunks) - 1;
      ++generation;
    }
    wake.notify_all();
    auto [begin, end] = getChunkRange(items, chunks, 0);
    body(begin, end);
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return pending == 0; });
    job = {};
    return true;
  }

private:
  struct Job {
    const std::function<void(int64_t, int64_t)> *body = nullptr;
    int64_t items = 0, chunks = 0;
  };

  void work(int chunk, uint64_t seen) {
    for (;;) {
      Job mine;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return generation != seen; });
        seen = generation;
        if (stopping)
          return;
        mine = job;
      }
      if (chunk >= mine.chunks)
        continue;
      auto [begin, end] = getChunkRange(mine.items, mine.chunks, chunk);
      (*mine.body)(begin, end);
      std::lock_guard<std::mutex> lock(mutex);
      if (--pending == 0)
        done.notify_one();
    }
  }

  std::mutex callMutex; ///< one run (or resize) at a time
  std::mutex mutex;     ///< guards the fields below
  std::condition_variable wake, done;
  uint64_t generation = 0;
  bool stopping = false;
  Job job;
  int pending = 0;
  std::vector<std::thread> workers;
};

/// OPENBLAS_NUM_THREADS is set (read once: splitsGemms runs every GEMM).
bool blasThreadsFixed() {
  static const bool fixed = [] {
    const char *env = std::getenv("OPENBLAS_NUM_THREADS");
    return env && *env;
  }();
  return fixed;
}

std::mutex configMutex;
int configured = 0;
bool gemmsOnPool = false;

/// OpenBLAS follows the kernels' thread count (or runs on one thread while
/// the GEMMs are on the pool) unless OPENBLAS_NUM_THREADS fixes its own:
/// its GEMMs may round differently on another thread count (measured: the
/// Fashion-MNIST MLP's fc1 gradients differ in the last bits between 1 and
/// 2 OpenBLAS threads), so a fixed count keeps every result the same bits
/// whatever --threads is. The caller holds configMutex.
void setBlasThreads(int threads) {
  if (openblas_set_num_threads && !blasThreadsFixed())
    openblas_set_num_threads(gemmsOnPool ? 1 : threads);
}

Pool &pool() {
  static Pool instance;
  return instance;
}

} // namespace

void setCpuThreads(int threads) {
  if (threads < 1 || threads > 4096)
    throw Error("the number of CPU threads must be between 1 and 4096, got " +
                std::to_string(threads));
  std::lock_guard<std::mutex> lock(configMutex);
  configured = threads;
  setBlasThreads(threads);
}

int getCpuThreads() {
  std::lock_guard<std::mutex> lock(configMutex);
  if (!configured) {
    int fromEnv = threadsFromEnvironment();
    configured = fromEnv ? fromEnv : availableCores();
    if (fromEnv || gemmsOnPool)
      setBlasThreads(configured);
  }
  return configured;
}

void setGemmsOnPool(bool on) {
  int threads = getCpuThreads();
  std::lock_guard<std::mutex> lock(configMutex);
  if (gemmsOnPool == on)
    return;
  gemmsOnPool = on;
  setBlasThreads(threads);
}

bool splitsGemms() {
  if (!openblas_set_num_threads || blasThreadsFixed() || getCpuThreads() < 2)
    return false;
  std::lock_guard<std::mutex> lock(configMutex);
  return gemmsOnPool;
}

std::pair<int64_t, int64_t> getChunkRange(int64_t items, int64_t chunks,
                                          int64_t chunk) {
  int64_t base = items / chunks, extra = items % chunks;
  int64_t begin = chunk * base + std::min(chunk, extra);
  return {begin, begin + base + (chunk < extra ? 1 : 0)};
}

void parallelFor(int64_t items, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body) {
  if (items <= 0)
    return;
  int threads = getCpuThreads();
  int64_t chunks = std::min<int64_t>(
      threads, (items + std::max<int64_t>(grain, 1) - 1) /
                   std::max<int64_t>(grain, 1));
  if (chunks <= 1) {
    body(0, items);
    return;
  }
  Pool &p = pool();
  {
    static std::mutex resizeMutex;
    std::lock_guard<std::mutex> lock(resizeMutex);
    if (p.size() != threads)
      p.resize(threads);
  }
  if (!p.run(items, chunks, body))
    body(0, items);
}

} // namespace snnrt
