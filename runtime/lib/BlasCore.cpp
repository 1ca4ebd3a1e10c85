//===- BlasCore.cpp - the CPU kernels OpenBLAS picked ---------------------===//
//
// BlasCore.h says why. OpenBLAS's generic fallbacks are the cores of CPUs
// without AVX; on a CPU with AVX they only mean that the model was unknown.
//
//===----------------------------------------------------------------------===//

#include "snnrt/BlasCore.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <unistd.h>

// Present when OpenBLAS is the BLAS linked in.
extern "C" char *openblas_get_corename(void) __attribute__((weak));

namespace snnrt {

std::string getBlasCoreName() {
  if (!openblas_get_corename)
    return "";
  const char *name = openblas_get_corename();
  return name ? name : "";
}

std::string recommendBlasCore() {
  const char *set = std::getenv("OPENBLAS_CORETYPE");
  if (set && *set)
    return "";
  std::string core = getBlasCoreName();
  // OpenBLAS's names for cores without AVX (lower case in some releases).
  static const char *generic[] = {"prescott",  "core2",  "penryn", "dunnington",
                                  "nehalem",   "atom",   "katmai", "coppermine",
                                  "northwood", "banias", "unknown"};
  bool fellBack = false;
  for (const char *g : generic)
    fellBack = fellBack || strcasecmp(core.c_str(), g) == 0;
  if (!fellBack)
    return "";
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "Sandybridge";
#endif
  return "";
}

static void warn(const std::string &core, const char *how) {
  std::fprintf(stderr,
               "snnrt: warning: OpenBLAS does not know this CPU and runs its "
               "generic %s kernels (CPU GEMMs several times slower); %s "
               "OPENBLAS_CORETYPE=%s\n",
               getBlasCoreName().c_str(), how, core.c_str());
}

void reexecWithBlasCore(char **argv) {
  std::string core = recommendBlasCore();
  if (core.empty())
    return;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
#if defined(__linux__)
  execv("/proc/self/exe", argv);
#endif
  // Still here: the exec failed; the variable only helps a new process.
  unsetenv("OPENBLAS_CORETYPE");
  warn(core, "set");
}

void warnIfGenericBlasCore() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string core = recommendBlasCore();
    if (!core.empty())
      warn(core, "start the program with");
  });
}

} // namespace snnrt
