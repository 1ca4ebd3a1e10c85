//===- HostKernels.cpp - loading the CPU neuron kernels of a module -------===//
//
// The library is opened once per path and kept for the process (modules are
// few; a handle is small). Whether the machine can run it is decided from
// the manifest before dlopen, so that another architecture or a CPU without
// the compiled level gets an error that says so instead of a loader
// message.
//
//===----------------------------------------------------------------------===//

#include "HostKernels.h"

#include "snnrt/CpuOps.h"
#include "snnrt/CpuThreads.h"
#include "snnrt/Error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace snnrt {
namespace {

#if defined(__x86_64__)
constexpr const char *kArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char *kArch = "aarch64";
#else
constexpr const char *kArch = "";
#endif

/// Whether this CPU implements `level` (as named by the compiler).
bool cpuSupports(const std::string &level) {
  if (level.empty())
    return true;
#if defined(__x86_64__) && defined(__GNUC__)
  if (level == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
#endif
  return false;
}

struct Library {
  void *handle = nullptr;
  /// Why there is no handle (no library, another machine), for errors.
  std::string missing;
  /// What the module's CPU kernel library holds ("... (kernels.host.so,
  /// x86-64-v3)").
  std::string loaded;
  /// Kernels looked up so far: ops run every step, dlsym once.
  std::map<std::string, cpu::HostKernel> kernels;
};

std::mutex librariesMutex;

/// Opens the module's library once. The caller holds librariesMutex.
Library &library(const Module &m) {
  static std::map<std::string, Library> libraries;
  const nlohmann::json &k = m.kernels;
  std::string file =
      k.is_object() && k.contains("host") && k["host"].is_string()
          ? k["host"].get<std::string>()
          : "";
  std::string path = m.dir + "/" + file;
  auto it = libraries.find(path);
  if (it != libraries.end())
    return it->second;
  Library &lib = libraries[path];
  if (file.empty()) {
    lib.missing = "the module has no CPU kernels";
    return lib;
  }
  std::string triple = k.value("host_triple", std::string());
  std::string level = k.value("host_cpu", std::string());
  std::string arch = triple.substr(0, triple.find('-'));
  if (arch != kArch) {
    lib.missing = "the module's CPU kernels are for " + triple;
    return lib;
  }
  if (!cpuSupports(level)) {
    lib.missing =
        "the module's CPU kernels need " + level + ", which this CPU lacks";
    return lib;
  }
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char *why = dlerror();
    libraries.erase(path);
    throw Error(path + ": cannot load the module's CPU kernels: " +
                (why ? why : "unknown error") +
                "; recompile the module on this machine");
  }
  lib.loaded = file + ", " + (level.empty() ? triple : level);
  return lib;
}

cpu::HostKernel lookup(const Module &m, Library &lib,
                       const std::string &name) {
  auto it = lib.kernels.find(name);
  if (it != lib.kernels.end())
    return it->second;
  void *symbol = dlsym(lib.handle, name.c_str());
  if (!symbol)
    throw Error(m.dir + ": the module's CPU kernel library has no kernel '" +
                name + "'; recompile the module");
  cpu::HostKernel kernel;
  kernel.fn = reinterpret_cast<cpu::HostKernel::Fn>(symbol);
  // Without NAME_range (a library from before ranges) the kernel runs its
  // whole grid in one call, whatever the range: one item.
  if (auto *range = static_cast<const int64_t *>(
          dlsym(lib.handle, (name + "_range").c_str()))) {
    if (range[0] < 0 || range[1] < 1)
      throw Error(m.dir + ": the module's CPU kernel '" + name +
                  "' has an invalid range {" + std::to_string(range[0]) +
                  ", " + std::to_string(range[1]) + "}; recompile the module");
    kernel.items = range[0];
    kernel.grain = range[1];
  }
  return lib.kernels[name] = kernel;
}

/// SNNRT_CPU_GRAIN=G replaces every kernel's grain (tests: G = 1 splits even
/// tiny kernels over the threads).
int64_t grainOverride() {
  static const int64_t grain = [] {
    const char *env = std::getenv("SNNRT_CPU_GRAIN");
    long long g = env ? std::atoll(env) : 0;
    return g > 0 ? static_cast<int64_t>(g) : int64_t(0);
  }();
  return grain;
}

} // namespace

void cpu::HostKernel::operator()(void **args) const {
  Fn f = fn;
  int64_t g = grainOverride();
  parallelFor(items, g ? g : grain,
              [f, args](int64_t begin, int64_t end) { f(args, begin, end); });
}

cpu::HostKernel cpu::findOpKernel(const Module &m, const std::string &name) {
  std::lock_guard<std::mutex> lock(librariesMutex);
  Library &lib = library(m);
  if (!lib.handle)
    throw Error(m.dir + ": kernel '" + name +
                "' is in the module's CPU kernel library, which cannot run "
                "here: " + lib.missing +
                "; compile the module on this machine with target=cpu or "
                "target=all");
  return lookup(m, lib, name);
}

std::string cpu::cpuKernelsUnavailable(const Module &m) {
  std::lock_guard<std::mutex> lock(librariesMutex);
  Library &lib = library(m);
  return lib.handle ? std::string() : lib.missing;
}

std::string describeCpuNeuronKernels(const Module &m) {
  std::lock_guard<std::mutex> lock(librariesMutex);
  Library &lib = library(m);
  if (!lib.handle)
    return "no generated kernels for this CPU (" + lib.missing + ")";
  return "generated neuron kernels (" + lib.loaded + ")";
}

} // namespace snnrt
