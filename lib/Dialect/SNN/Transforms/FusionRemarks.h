//===- FusionRemarks.h - how --snn-fuse's remarks name an op -----*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSIONREMARKS_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSIONREMARKS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::snn {

/// `'snn.lif' "lif1"`: the op's name and, when it has one, its layer name.
inline std::string describeForRemark(Operation *op) {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  if (auto name = op->getAttrOfType<StringAttr>("snn.name"))
    text += " \"" + name.str() + "\"";
  return text;
}

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSIONREMARKS_H
