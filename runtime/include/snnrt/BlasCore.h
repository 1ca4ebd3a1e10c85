//===- BlasCore.h - the CPU kernels OpenBLAS picked -------------*- C++ -*-===//
//
// OpenBLAS (DYNAMIC_ARCH builds, as Debian's) picks its GEMM kernels from
// the CPU model when it loads. A release that does not know the model falls
// back to its generic "Prescott" kernels (SSE3): Debian 12's 0.3.21 does so
// on recent Xeons with AVX-512, where its GEMMs then run 4-5x slower
// (measured on the SHD step: dense 1100-1800 ms a step instead of 210-290).
// OpenBLAS reads OPENBLAS_CORETYPE when it loads, before main, so the fix is
// that variable before the process starts: snn-run sets it and executes
// itself again (reexecWithBlasCore); a program linking libsnnrt gets a
// warning naming the value to set.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_BLASCORE_H
#define SNNRT_BLASCORE_H

#include <string>

namespace snnrt {

/// The kernels OpenBLAS runs ("SkylakeX", "Haswell", "Prescott", ...);
/// empty when the BLAS linked in is not OpenBLAS (or there is none).
std::string getBlasCoreName();

/// The OPENBLAS_CORETYPE that would give this CPU its own kernels when
/// OpenBLAS fell back to generic ones and the variable is not set
/// ("SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA, "Sandybridge" with
/// AVX); empty when nothing is to gain.
std::string recommendBlasCore();

/// When recommendBlasCore() names a core: sets OPENBLAS_CORETYPE and
/// executes this program again with `argv` (Linux: /proc/self/exe). Returns
/// only when there was nothing to do or the exec failed (then warns).
void reexecWithBlasCore(char **argv);

/// Prints, once per process, the warning that OpenBLAS runs generic
/// kernels and the OPENBLAS_CORETYPE to set (nothing when it does not).
void warnIfGenericBlasCore();

} // namespace snnrt

#endif // SNNRT_BLASCORE_H
