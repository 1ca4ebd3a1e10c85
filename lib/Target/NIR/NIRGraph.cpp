//===- NIRGraph.cpp - NIR graphs read from HDF5 ---------------------------===//

#include "NIRGraph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::snn::nir;
using llvm::StringRef;

StringRef mlir::snn::nir::supportedNIRNodeTypes() {
  return "Input, Output, Affine, Linear, Scale, Conv1d, Conv2d, SumPool2d, AvgPool2d, "
         "Flatten, Threshold, Delay, I, IF, LI, LIF, CubaLI, CubaLIF, NIRGraph";
}

const H5Data *FlatNode::param(StringRef key) const {
  const H5Entry *e = group ? group->find(key) : nullptr;
  return e && !e->isGroup ? &e->data : nullptr;
}

namespace {
/// Inlines one (sub)graph into the flat graph.
class Flattener {
public:
  Flattener(FlatGraph &out, NodeErrorFn error) : out(out), error(error) {}

  /// Adds the nodes of `graph` (named `prefix` + node name) and its edges.
  LogicalResult addGraph(const H5Entry &graph, const std::string &prefix,
                         bool nested, int depth);

private:
  /// Resolves an edge endpoint of the graph at `prefix` to a flat node index.
  FailureOr<unsigned> resolve(const std::string &prefix, StringRef name,
                              bool isSource, StringRef edgeText);

  FlatGraph &out;
  NodeErrorFn error;
  llvm::StringMap<unsigned> index;           // flat name -> node
  llvm::StringMap<const H5Entry *> subgraphs; // flat name -> NIRGraph group
};
} // namespace

static std::string typeOf(const H5Entry &node) {
  const H5Entry *t = node.find("type");
  if (!t || t->isGroup || !t->data.isString || t->data.strings.size() != 1)
    return "";
  return t->data.strings[0];
}

LogicalResult Flattener::addGraph(const H5Entry &graph,
                                  const std::string &prefix, bool nested,
                                  int depth) {
  std::string where = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
  const H5Entry *nodes = graph.find("nodes");
  if (!nodes || !nodes->isGroup)
    return error(where) << "NIR graph" << (where.empty() ? "" : " '" + where + "'")
                        << " has no 'nodes' group; is this a NIR file?";
  for (const H5Entry &node : nodes->children) {
    std::string name = prefix + node.name;
    if (!node.isGroup)
      return error(name) << "NIR node '" << name
                         << "' is a dataset, expected a group with a 'type'";
    std::string type = typeOf(node);
    if (type.empty())
      return error(name) << "NIR node '" << name
                         << "' has no 'type' string dataset";
    if (type == "NIRGraph") {
      if (depth >= 16)
        return error(name) << "NIR graphs nested deeper than 16 levels at '"
                           << name << "'";
      subgraphs[name] = &node;
      if (failed(addGraph(node, name + ".", /*nested=*/true, depth + 1)))
        return failure();
      continue;
    }
    if (nested && (type == "Input" || type == "Output"))
      type = kPassThrough.str();
    index[name] = out.nodes.size();
    out.nodes.push_back({name, type, &node});
  }

  const H5Entry *edges = graph.find("edges");
  if (!edges)
    return error(where) << "NIR graph" << (where.empty() ? "" : " '" + where + "'")
                        << " has no 'edges' dataset";
  const H5Data &e = edges->data;
  if (edges->isGroup || (!e.isString && !e.strings.empty()) ||
      (e.isString && e.strings.size() % 2 != 0))
    return error(where) << "NIR 'edges' must be a list of (source, target) "
                           "name pairs";
  for (size_t i = 0; i + 1 < e.strings.size(); i += 2) {
    std::string text = "'" + e.strings[i] + "' -> '" + e.strings[i + 1] + "'";
    FailureOr<unsigned> src = resolve(prefix, e.strings[i], true, text);
    if (failed(src))
      return failure();
    FailureOr<unsigned> dst = resolve(prefix, e.strings[i + 1], false, text);
    if (failed(dst))
      return failure();
    out.edges.push_back({*src, *dst});
  }
  return success();
}

FailureOr<unsigned> Flattener::resolve(const std::string &prefix,
                                       StringRef name, bool isSource,
                                       StringRef edgeText) {
  std::string full = prefix + name.str();
  auto it = index.find(full);
  if (it != index.end())
    return it->second;
  auto sub = subgraphs.find(full);
  if (sub != subgraphs.end()) {
    // An edge to or from a subgraph means its only Input resp. Output node.
    StringRef wanted = isSource ? "Output" : "Input";
    SmallVector<std::string> ends;
    for (const H5Entry &n : sub->second->find("nodes")->children)
      if (typeOf(n) == wanted)
        ends.push_back(n.name);
    if (ends.size() == 1)
      return index[full + "." + ends[0]];
    auto diag = error(full) << "edge " << edgeText << " names subgraph '"
                            << full << "', which has " << ends.size() << " "
                            << wanted << " nodes";
    if (!ends.empty())
      diag << "; name one of them as '" << name << "." << ends[0] << "'";
    return failure();
  }
  // "sub.node" names a node inside a subgraph.
  size_t dot = name.find('.');
  if (dot != StringRef::npos &&
      subgraphs.count(prefix + name.substr(0, dot).str()))
    return resolve(prefix + name.substr(0, dot).str() + ".",
                   name.substr(dot + 1), isSource, edgeText);
  return error(full) << "edge " << edgeText << " names node '" << full
                     << "', which is not in the graph";
}

LogicalResult mlir::snn::nir::loadNIRGraph(const H5Entry &root,
                                           FlatGraph &graph,
                                           NodeErrorFn error) {
  if (const H5Entry *v = root.find("version"))
    if (!v->isGroup && v->data.isString && !v->data.strings.empty())
      graph.version = v->data.strings[0];
  const H5Entry *top = root.find("node");
  if (!top)
    top = &root; // early 0.x files keep the graph at the root
  if (!top->isGroup)
    return error("") << "'node' is not a group; is this a NIR file?";
  std::string type = top == &root ? "NIRGraph" : typeOf(*top);
  if (type != "NIRGraph")
    return error("") << "the root node has type '" << type
                     << "', expected 'NIRGraph'";
  Flattener flattener(graph, error);
  if (failed(flattener.addGraph(*top, "", /*nested=*/false, 0)))
    return failure();
  if (graph.nodes.empty())
    return error("") << "the NIR graph has no nodes";
  return success();
}
