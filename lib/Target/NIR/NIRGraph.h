//===- NIRGraph.h - NIR graphs read from HDF5 -------------------*- C++ -*-===//
//
// The node/edge structure of a NIR file, with nested NIRGraph nodes inlined:
// the nodes of a subgraph `sub` are named `sub.<node>`, and its Input/Output
// nodes become pass-through nodes. Parameters stay in the HDF5 tree.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_TARGET_NIR_NIRGRAPH_H
#define SNN_LIB_TARGET_NIR_NIRGRAPH_H

#include "HDF5File.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::snn::nir {

/// The type of an inlined subgraph's Input/Output node.
constexpr llvm::StringLiteral kPassThrough = "PassThrough";

struct FlatNode {
  std::string name;
  std::string type;
  const H5Entry *group = nullptr;

  /// A parameter dataset, or null when absent.
  const H5Data *param(llvm::StringRef key) const;
};

struct FlatGraph {
  std::string version; // "" when the file has none (early 0.x files)
  std::vector<FlatNode> nodes;
  std::vector<std::pair<unsigned, unsigned>> edges; // indices into nodes
};

/// Emits an error about a node ("" for the whole file).
using NodeErrorFn = llvm::function_ref<InFlightDiagnostic(llvm::StringRef)>;

/// Reads the graph of a NIR file (1.x: root group `node`; 0.x files without
/// it: the root itself) and inlines nested graphs.
LogicalResult loadNIRGraph(const H5Entry &root, FlatGraph &graph,
                           NodeErrorFn error);

/// The NIR node types the importer understands, for error messages.
llvm::StringRef supportedNIRNodeTypes();

} // namespace mlir::snn::nir

#endif // SNN_LIB_TARGET_NIR_NIRGRAPH_H
