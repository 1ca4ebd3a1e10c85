//===- HostKernels.cpp - loading the CPU neuron kernels of a module -------===//
//
// The library is opened once per path and kept for the process (modules are
// few; a handle is small). Whether the machine can run it is decided from
// the manifest before dlopen, so that another architecture or a CPU without
// the compiled level falls back to the built-in loops instead of failing.
//
//===----------------------------------------------------------------------===//

#include "HostKernels.h"

#include "snnrt/CpuOps.h"
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
  std::string status;
  /// Kernels looked up so far: ops run every step, dlsym once.
  std::map<std::string, cpu::HostKernelFn> kernels;
};

std::mutex librariesMutex;

/// Opens the module's library once; `status` says what runs and why. The
/// caller holds librariesMutex.
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
  const char *env = std::getenv("SNNRT_CPU_KERNELS");
  if (env && std::string(env) == "builtin") {
    lib.status = "built-in neuron loops (SNNRT_CPU_KERNELS=builtin)";
    return lib;
  }
  if (file.empty()) {
    lib.status = "built-in neuron loops (the module has no CPU kernels)";
    return lib;
  }
  std::string triple = k.value("host_triple", std::string());
  std::string level = k.value("host_cpu", std::string());
  std::string arch = triple.substr(0, triple.find('-'));
  if (arch != kArch) {
    lib.status = "built-in neuron loops (the module's CPU kernels are for " +
                 triple + ")";
    return lib;
  }
  if (!cpuSupports(level)) {
    lib.status = "built-in neuron loops (the module's CPU kernels need " +
                 level + ", which this CPU lacks)";
    return lib;
  }
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char *why = dlerror();
    libraries.erase(path);
    throw Error(path + ": cannot load the module's CPU neuron kernels: " +
                (why ? why : "unknown error") +
                "; recompile the module on this machine, or run the built-in "
                "loops with SNNRT_CPU_KERNELS=builtin");
  }
  lib.status = "generated neuron kernels (" + file + ", " +
               (level.empty() ? triple : level) + ")";
  return lib;
}

} // namespace

cpu::HostKernelFn cpu::findHostKernel(const Module &m,
                                      const std::string &name) {
  std::lock_guard<std::mutex> lock(librariesMutex);
  Library &lib = library(m);
  if (!lib.handle)
    return nullptr;
  auto it = lib.kernels.find(name);
  if (it != lib.kernels.end())
    return it->second;
  void *symbol = dlsym(lib.handle, name.c_str());
  if (!symbol)
    throw Error(m.dir + ": the module's CPU kernel library has no kernel '" +
                name + "'; recompile the module");
  return lib.kernels[name] = reinterpret_cast<HostKernelFn>(symbol);
}

std::string describeCpuNeuronKernels(const Module &m) {
  std::lock_guard<std::mutex> lock(librariesMutex);
  return library(m).status;
}

} // namespace snnrt
