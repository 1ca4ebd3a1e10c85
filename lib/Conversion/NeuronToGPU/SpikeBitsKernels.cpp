//===- SpikeBitsKernels.cpp - pack/unpack kernels of saved spikes ---------===//

#include "SpikeBitsKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::snn;

static constexpr int64_t kBitsPerWord = 32;

SmallVector<Type> mlir::snn::getSpikeBitsArgTypes(const OpKernelSpec &spec,
                                                  MLIRContext *ctx) {
  Type spikes = MemRefType::get({spec.packedElements}, Float32Type::get(ctx));
  Type words = MemRefType::get({spec.sizes.front()}, IntegerType::get(ctx, 32));
  if (spec.kind == OpKernelKind::PackBits)
    return {spikes, words};
  return {words, spikes};
}

void mlir::snn::emitSpikeBitsWord(OpBuilder &b, Location loc,
                                  const OpKernelSpec &spec, ValueRange args,
                                  Value w) {
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Type i32 = b.getI32Type();
  Value first = arith::MulIOp::create(b, loc, w, index(kBitsPerWord));
  int64_t total = spec.packedElements;
  // Only the last word can be partial: elements past the end are 0 bits.
  bool partial = total % kBitsPerWord != 0;
  auto inRange = [&](OpBuilder &nb, Value e) {
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, e,
                                 arith::ConstantIndexOp::create(nb, loc, total));
  };

  if (spec.kind == OpKernelKind::PackBits) {
    Value spikes = args[0], words = args[1];
    Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(kBitsPerWord), index(1), ValueRange{zero},
        [&](OpBuilder &nb, Location l, Value j, ValueRange acc) {
          Value e = arith::AddIOp::create(nb, l, first, j);
          Value valid = partial ? inRange(nb, e) : Value();
          // A clamped address keeps the load in bounds; the bit is masked.
          Value at = valid ? arith::SelectOp::create(
                                 nb, l, valid, e,
                                 arith::ConstantIndexOp::create(nb, l, 0))
                           : e;
          Value s = memref::LoadOp::create(nb, l, spikes, ValueRange{at});
          Value fired = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::UNE, s,
              arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0f)));
          if (valid)
            fired = arith::AndIOp::create(nb, l, fired, valid);
          Value bit = arith::ShLIOp::create(
              nb, l, arith::ExtUIOp::create(nb, l, i32, fired),
              arith::IndexCastUIOp::create(nb, l, i32, j));
          scf::YieldOp::create(nb, l,
                               ValueRange{arith::OrIOp::create(nb, l, acc[0], bit)});
        });
    memref::StoreOp::create(b, loc, loop.getResult(0), words, ValueRange{w});
    return;
  }

  Value words = args[0], spikes = args[1];
  Value word = memref::LoadOp::create(b, loc, words, ValueRange{w});
  scf::ForOp::create(
      b, loc, index(0), index(kBitsPerWord), index(1), ValueRange{},
      [&](OpBuilder &nb, Location l, Value j, ValueRange) {
        Value e = arith::AddIOp::create(nb, l, first, j);
        Value shifted = arith::ShRUIOp::create(
            nb, l, word, arith::IndexCastUIOp::create(nb, l, i32, j));
        Value bit = arith::AndIOp::create(
            nb, l, shifted, arith::ConstantIntOp::create(nb, l, i32, 1));
        Value s = arith::UIToFPOp::create(nb, l, nb.getF32Type(), bit);
        if (partial) {
          auto guard = scf::IfOp::create(nb, l, inRange(nb, e),
                                         /*withElse=*/false);
          OpBuilder::InsertionGuard g(nb);
          nb.setInsertionPointToStart(guard.thenBlock());
          memref::StoreOp::create(nb, l, s, spikes, ValueRange{e});
        } else {
          memref::StoreOp::create(nb, l, s, spikes, ValueRange{e});
        }
        scf::YieldOp::create(nb, l);
      });
}
