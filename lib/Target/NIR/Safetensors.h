//===- Safetensors.h - reading safetensors checkpoints ----------*- C++ -*-===//
//
// The checkpoint format of snn-run and PyTorch: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the data.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_TARGET_NIR_SAFETENSORS_H
#define SNN_LIB_TARGET_NIR_SAFETENSORS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::snn {

struct SafetensorsTensor {
  llvm::SmallVector<int64_t> shape;
  std::vector<float> values; // F32, F64, F16 and BF16 are converted
};

/// Parses a whole safetensors file image; errors name the broken tensor.
llvm::Expected<llvm::StringMap<SafetensorsTensor>>
readSafetensors(llvm::StringRef image);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_NIR_SAFETENSORS_H
