//===- HostNonzeroScan.cpp - a row's nonzeros on the CPU, 8 at a time -----===//
//
// The host kernels that list a row's nonzeros (compact_rows, event_linear)
// at a few percent density: a branch per element mispredicts at every
// nonzero, and a branchless store per element costs a store per element.
// Here 8 floats are compared at once, the comparison's 8 bits taken as a
// byte (vmovmskps), and only its set bits visited (ctz): per 8 zeros, a
// load, a compare and a test.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::snn;

SmallVector<Value> mlir::snn::emitForEachSetBit(
    OpBuilder &b, Location loc, Value mask, ValueRange state,
    function_ref<SmallVector<Value>(Value bit, ValueRange state)> body) {
  Type i32 = b.getI32Type();
  SmallVector<Value> init{mask};
  llvm::append_range(init, state);
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange(ValueRange(init)), init,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value more =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, args[0],
                                  arith::ConstantIntOp::create(nb, l, i32, 0));
        scf::ConditionOp::create(nb, l, more, args);
      },
      [&](OpBuilder &nb, Location l, ValueRange args) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(nb.getInsertionBlock());
        // The mask is nonzero here; the intrinsic needs no math lowering.
        Value bit = LLVM::CountTrailingZerosOp::create(b, loc, i32, args[0],
                                                       /*is_zero_poison=*/true);
        SmallVector<Value> next{arith::AndIOp::create(
            b, loc, args[0],
            arith::SubIOp::create(
                b, loc, args[0],
                arith::ConstantIntOp::create(b, loc, i32, 1)))};
        llvm::append_range(next, body(bit, args.drop_front()));
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults().drop_front());
}

Value mlir::snn::emitHostNonzeroScan(
    OpBuilder &b, Location loc, Value x, Value rowStart, int64_t k,
    function_ref<void(Value j, Value slot)> body) {
  return emitHostNonzeroScan(b, loc, x, rowStart,
                             arith::ConstantIndexOp::create(b, loc, k), body);
}

Value mlir::snn::emitHostNonzeroScan(
    OpBuilder &b, Location loc, Value x, Value rowStart, Value k,
    function_ref<void(Value j, Value slot)> body) {
  constexpr int64_t lanes = 8;
  Type i32 = b.getI32Type(), indexType = b.getIndexType();
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value whole = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, k, idx(lanes)), idx(lanes));

  auto vectors =
      scf::ForOp::create(b, loc, idx(0), whole, idx(lanes), ValueRange{idx(0)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(vectors.getBody());
    Value j0 = vectors.getInductionVar();
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    Value v = vector::LoadOp::create(
        b, loc, vecType, x,
        ValueRange{arith::AddIOp::create(b, loc, rowStart, j0)});
    Value zeros = vector::BroadcastOp::create(b, loc, vecType, zero);
    Value set =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zeros);
    Value byte = vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI8Type()),
                                  set),
        ArrayRef<int64_t>{0});
    Value mask = arith::ExtUIOp::create(b, loc, i32, byte);
    Value count =
        emitForEachSetBit(
            b, loc, mask, ValueRange{vectors.getRegionIterArg(0)},
            [&](Value bit, ValueRange found) -> SmallVector<Value> {
              Value lane = arith::IndexCastUIOp::create(b, loc, indexType, bit);
              body(arith::AddIOp::create(b, loc, j0, lane), found[0]);
              return {arith::AddIOp::create(b, loc, found[0], idx(1))};
            })
            .front();
    scf::YieldOp::create(b, loc, ValueRange{count});
  }
  std::optional<int64_t> staticK = getConstantIntValue(k);
  if (staticK && *staticK % lanes == 0)
    return vectors.getResult(0);

  // The last k % 8 one at a time.
  auto tail = scf::ForOp::create(b, loc, whole, k, idx(1),
                                 ValueRange{vectors.getResult(0)});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(tail.getBody());
  Value j = tail.getInductionVar(), found = tail.getRegionIterArg(0);
  Value set = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::UNE,
      memref::LoadOp::create(
          b, loc, x, ValueRange{arith::AddIOp::create(b, loc, rowStart, j)}),
      zero);
  auto ifOp = scf::IfOp::create(b, loc, set, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body(j, found);
  }
  Value step = arith::IndexCastUIOp::create(
      b, loc, indexType, arith::ExtUIOp::create(b, loc, i32, set));
  scf::YieldOp::create(b, loc,
                       ValueRange{arith::AddIOp::create(b, loc, found, step)});
  return tail.getResult(0);
}

Value mlir::snn::emitHostRowBitsScan(
    OpBuilder &b, Location loc, Value words, Value row, int64_t k,
    function_ref<void(Value j, Value slot)> body) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t rowWords = k / 32;
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(rowWords), idx(1),
                                 ValueRange{idx(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value w = loop.getInductionVar();
  Value word = memref::LoadOp::create(
      b, loc, words,
      ValueRange{arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, row, idx(rowWords)), w)});
  Value wordStart = arith::MulIOp::create(b, loc, w, idx(32));
  Value found =
      emitForEachSetBit(
          b, loc, word, ValueRange{loop.getRegionIterArg(0)},
          [&](Value bit, ValueRange state) -> SmallVector<Value> {
            body(arith::AddIOp::create(
                     b, loc, wordStart,
                     arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                                  bit)),
                 state[0]);
            return {arith::AddIOp::create(b, loc, state[0], idx(1))};
          })
          .front();
  scf::YieldOp::create(b, loc, ValueRange{found});
  return loop.getResult(0);
}
