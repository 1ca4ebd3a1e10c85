//===- TransposeKernels.cpp - the generated kernel of snn.transpose -------===//

#include "snn/Conversion/NeuronToGPU/TransposeKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::snn;

OpKernelSpec mlir::snn::makeTransposeKernelSpec(ArrayRef<int64_t> input,
                                                ArrayRef<int64_t> permutation) {
  // The output's dims as input dims, size-1 dims dropped.
  SmallVector<int64_t> order;
  for (int64_t p : permutation)
    if (input[p] != 1)
      order.push_back(p);
  // Runs of consecutive input dims in the output order become one dim.
  SmallVector<std::pair<int64_t, int64_t>> runs; // [first, last] input dims
  for (int64_t p : order) {
    if (!runs.empty() && runs.back().second + 1 == p) {
      runs.back().second = p;
      continue;
    }
    // A dropped size-1 dim between two dims does not split their run.
    if (!runs.empty() && runs.back().second < p &&
        llvm::all_of(input.slice(runs.back().second + 1,
                                 p - runs.back().second - 1),
                     [](int64_t d) { return d == 1; })) {
      runs.back().second = p;
      continue;
    }
    runs.push_back({p, p});
  }
  // The merged input shape in input order, and each run's place in it.
  SmallVector<size_t> byFirst(runs.size());
  for (size_t k = 0; k < runs.size(); ++k)
    byFirst[k] = k;
  llvm::sort(byFirst, [&](size_t a, size_t b) {
    return runs[a].first < runs[b].first;
  });
  OpKernelSpec spec;
  spec.kind = OpKernelKind::Transpose;
  TransposeGeometry &g = spec.transpose;
  g.shape.assign(runs.size(), 1);
  g.permutation.assign(runs.size(), 0);
  for (auto [rank, k] : llvm::enumerate(byFirst)) {
    int64_t size = 1;
    for (int64_t d = runs[k].first; d <= runs[k].second; ++d)
      size *= input[d];
    g.shape[rank] = size;
    g.permutation[k] = rank;
  }
  if (g.shape.empty()) { // every dim is 1
    g.shape = {1};
    g.permutation = {0};
  }
  spec.sizes = {g.getElements()};
  return spec;
}

void mlir::snn::emitTransposeElement(OpBuilder &b, Location loc,
                                     const OpKernelSpec &spec, ValueRange args,
                                     Value i) {
  const TransposeGeometry &g = spec.transpose;
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  size_t rank = g.shape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * g.shape[d];
  // Output coordinates from the last dim; each adds its input stride.
  Value rest = i, at;
  for (size_t j = rank; j-- > 0;) {
    int64_t p = g.permutation[j];
    Value coord = j == 0 ? rest : Value(arith::RemUIOp::create(
                                      b, loc, rest, c(g.shape[p])));
    if (j != 0)
      rest = arith::DivUIOp::create(b, loc, rest, c(g.shape[p]));
    Value term = strides[p] == 1
                     ? coord
                     : Value(arith::MulIOp::create(b, loc, coord, c(strides[p])));
    at = at ? Value(arith::AddIOp::create(b, loc, at, term)) : term;
  }
  Value v = memref::LoadOp::create(b, loc, args[0], ValueRange{at});
  memref::StoreOp::create(b, loc, v, args[1], ValueRange{i});
}
