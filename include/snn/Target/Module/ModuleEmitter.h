//===- ModuleEmitter.h - compiled module directory writer -------*- C++ -*-===//
//
// Turns a module in the multi-step form into the compiled module directory of
// docs/artifact-format.md: manifest.json, init.safetensors and, for CUDA, the
// neuron kernels as cubin and PTX.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_TARGET_MODULE_MODULEEMITTER_H
#define SNN_TARGET_MODULE_MODULEEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::snn {

/// Which device code a compiled module carries. The programs of the manifest
/// run on the CPU whatever the target; `Cuda` and `All` add the generated
/// GPU neuron kernels (a cubin per chip and PTX), `Cpu` and `All` the neuron
/// kernels compiled for this machine's CPU (a shared library).
enum class ModuleTarget { Cpu, Cuda, All };

struct ModuleCompileOptions {
  /// The directory to write (replaced atomically when it exists).
  std::string outputDir;
  ModuleTarget target = ModuleTarget::All;
  /// CUDA architectures of the cubins ("sm_80", "sm_90").
  std::vector<std::string> chips{"sm_80", "sm_90"};
  /// Batch size for dynamic batch dimensions; 0 when the IR fixes it.
  int64_t batch = 0;
  /// Training saves each multi-step neuron layer's H in bf16 (the generated
  /// kernels round it to nearest even).
  bool savedHBf16 = false;
  /// Training recomputes the H of lif and if layers from their input in the
  /// backward, with a membrane checkpoint every this many steps, instead of
  /// saving it (0: save H).
  int64_t recomputeChunk = 0;
  /// Training saves the spikes that only weight gradients read as bits (one
  /// u32 word per 32 spikes), unpacked right before each reader.
  bool spikeBits = false;
  /// Wide event-driven linear layers run as compact_rows then
  /// event_linear_tiles where the tile fits every chip's shared memory
  /// (EventLinearTiles.h).
  bool eventTiles = false;
  /// A spiking layer whose training spikes only those tiles' compact_rows
  /// read writes them as bits (lib/Target/Module/RowSpikeBits.h).
  bool rowBits = true;
  /// A spiking layer whose input gradient feeds compact_columns writes its
  /// occupancy bits too (lib/Target/Module/RowSpikeBits.h).
  bool gradBits = true;
};

/// Parses "cpu", "cuda" or "all".
std::optional<ModuleTarget> parseModuleTarget(StringRef name);

/// Compiles `module` (entry `func.func @forward`, optional `@train_step`, both
/// in the multi-step form) into `options.outputDir`. Emits a diagnostic on the
/// offending op and leaves no directory behind on failure. `module` is not
/// modified.
LogicalResult compileToModuleDirectory(ModuleOp module,
                                       const ModuleCompileOptions &options);

} // namespace mlir::snn

#endif // SNN_TARGET_MODULE_MODULEEMITTER_H
