//===- GradBand.cpp - the sparse backward's surrogate band ----------------===//
//
// `--snn-autodiff="grad-threshold=B"` (Perez-Nieves & Goodman, NeurIPS 2021):
// the surrogate derivative is kept only in the band |H - v_th| <= B, so the
// backward's input-current gradients are exactly 0 for every neuron far from
// its threshold. The band is a parameter of #snn.surrogate: the generated
// kernels, the runtime and the reference read it from there.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/GradBand.h"

#include "snn/Dialect/SNN/IR/SNNOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::snn;

std::optional<double> mlir::snn::parseGradThreshold(llvm::StringRef text,
                                                    std::string &why) {
  double band = 0.0;
  // getAsDouble returns true on error; it accepts "inf" and "INFINITY".
  if (text.trim().getAsDouble(band) || !(band > 0.0)) {
    why = "grad-threshold must be a number > 0 (the half-width B of the band "
          "|H - v_th| <= B that keeps the surrogate gradient) or inf, got '" +
          text.str() + "'";
    return std::nullopt;
  }
  return band;
}

unsigned mlir::snn::setGradBand(Operation *root, double band) {
  unsigned changed = 0;
  StringRef name = "surrogate";
  root->walk([&](Operation *op) {
    std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
    if (!info || !llvm::any_of(info->getAttributeNames(), [&](StringAttr a) {
          return a.getValue() == name;
        }))
      return;
    MLIRContext *ctx = op->getContext();
    SurrogateAttr old = getSurrogateOrDefault(
        ctx, dyn_cast_or_null<SurrogateAttr>(op->getAttr(name)));
    op->setAttr(name, SurrogateAttr::get(ctx, old.getKind(), old.getAlpha(),
                                         old.getThetaGrad(),
                                         Builder(ctx).getF64FloatAttr(band)));
    ++changed;
  });
  return changed;
}
