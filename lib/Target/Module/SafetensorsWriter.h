//===- SafetensorsWriter.h - writing safetensors files ----------*- C++ -*-===//
//
// The format of init.safetensors and of checkpoints: an 8-byte little-endian
// header length, a JSON header {name: {dtype, shape, data_offsets}}, then the
// raw tensor data. Only F32 tensors are written.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_TARGET_MODULE_SAFETENSORSWRITER_H
#define SNN_LIB_TARGET_MODULE_SAFETENSORSWRITER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::snn {

class SafetensorsWriter {
public:
  /// Adds a tensor; returns false when `name` is already taken.
  bool add(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
           std::vector<float> values);
  bool empty() const { return tensors.empty(); }
  /// Adds the tensors of `other` whose names are new here; returns the first
  /// name that both hold with different shapes or values ("" when none).
  std::string merge(const SafetensorsWriter &other);
  /// The whole file image. Tensors are laid out in insertion order and the
  /// header is padded with spaces so that the data starts 8-byte aligned.
  std::string serialize() const;

private:
  struct Tensor {
    std::string name;
    llvm::SmallVector<int64_t> shape;
    std::vector<float> values;
  };
  std::vector<Tensor> tensors;
  llvm::StringMap<unsigned> index;
};

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_SAFETENSORSWRITER_H
