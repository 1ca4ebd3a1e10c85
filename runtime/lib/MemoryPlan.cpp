//===- MemoryPlan.cpp - storage sharing between short-lived tensors -------===//

#include "snnrt/MemoryPlan.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace snnrt {

MemoryPlanMode memoryPlanMode() {
  const char *v = std::getenv("SNNRT_MEMORY_PLAN");
  if (v && std::strcmp(v, "0") == 0)
    return MemoryPlanMode::Off;
  if (v && std::strcmp(v, "poison") == 0)
    return MemoryPlanMode::Poison;
  return MemoryPlanMode::On;
}

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct LiveRange {
  int64_t first = kNever, last = -1;
  bool used() const { return last >= 0; }
  bool overlaps(const LiveRange &o) const {
    return first <= o.last && o.first <= last;
  }
};

/// Every tensor an op touches; a time loop touches its whole body at once.
void collectTensors(const Op &op, std::vector<int> &ids) {
  ids.insert(ids.end(), op.in.begin(), op.in.end());
  ids.insert(ids.end(), op.out.begin(), op.out.end());
  ids.insert(ids.end(), op.args.begin(), op.args.end());
  ids.insert(ids.end(), op.yields.begin(), op.yields.end());
  for (const Op &inner : op.body)
    collectTensors(inner, ids);
}

/// Scratch of one run: the programs write it before they read it.
bool sharable(const TensorInfo &t) {
  if (!t.init.is_null())
    return false;
  if (t.role == "activation" || t.role == "saved")
    return true;
  // Parameter gradients are read by the host (snn-run grads) and the update.
  return t.role == "grad" && t.name.rfind("grad:", 0) != 0;
}

} // namespace

MemoryPlan planMemory(const Module &module,
                      const std::function<size_t(const TensorInfo &)> &bytes,
                      size_t alignment) {
  size_t count = 0;
  for (const TensorInfo &t : module.tensors)
    count = std::max(count, size_t(t.id) + 1);
  MemoryPlan plan;
  plan.offset.assign(count, -1);
  auto root = [&](int id) {
    while (module.tensor(id).aliasOf >= 0)
      id = module.tensor(id).aliasOf;
    return id;
  };

  // Live ranges over the programs in the order they run.
  std::vector<std::string> order;
  for (const char *name : {"infer", "train_forward", "backward", "update"})
    if (module.programs.count(name))
      order.push_back(name);
  for (const auto &[name, ops] : module.programs)
    if (std::find(order.begin(), order.end(), name) == order.end())
      order.push_back(name);
  std::vector<LiveRange> range(count);
  // The host reads a spike layer's output after the program that writes it.
  std::vector<bool> readAfter(count, false);
  for (const auto &[name, id] : module.spikeLayers)
    if (id >= 0 && size_t(id) < count)
      readAfter[root(id)] = true;
  for (int id : module.hostReads)
    if (id >= 0 && size_t(id) < count)
      readAfter[root(id)] = true;
  int64_t position = 0;
  std::vector<int> ids;
  for (const std::string &name : order) {
    std::vector<int> inProgram;
    for (const Op &op : module.programs.at(name)) {
      ids.clear();
      collectTensors(op, ids);
      for (int id : ids) {
        LiveRange &r = range[root(id)];
        r.first = std::min(r.first, position);
        r.last = std::max(r.last, position);
        inProgram.push_back(root(id));
      }
      ++position;
    }
    for (int id : inProgram)
      if (readAfter[id])
        range[id].last = std::max(range[id].last, position - 1);
  }

  // A storage owner shares only when it and every alias of it may.
  std::vector<bool> candidate(count, false);
  for (const TensorInfo &t : module.tensors)
    if (t.aliasOf < 0)
      candidate[t.id] = range[t.id].used();
  for (const TensorInfo &t : module.tensors)
    if (!sharable(t))
      candidate[root(t.id)] = false;
  for (int id : {module.input, module.output, module.labels, module.loss,
                 module.correct, module.evalLabels, module.evalLoss,
                 module.evalCorrect})
    if (id >= 0 && size_t(id) < count)
      candidate[root(id)] = false;

  struct Block {
    int id;
    size_t size;
    LiveRange live;
  };
  std::vector<Block> blocks;
  for (const TensorInfo &t : module.tensors)
    if (t.aliasOf < 0 && candidate[t.id]) {
      size_t size = (bytes(t) + alignment - 1) / alignment * alignment;
      blocks.push_back({t.id, size, range[t.id]});
      plan.plannedBytes += size;
    }
  // Largest first: big tensors take the low offsets, small ones fill gaps.
  std::stable_sort(
      blocks.begin(), blocks.end(),
      [](const Block &a, const Block &b) { return a.size > b.size; });
  std::vector<const Block *> placed;
  std::vector<std::pair<size_t, size_t>> busy; // [offset, end) of live peers
  for (const Block &b : blocks) {
    busy.clear();
    for (const Block *p : placed)
      if (p->live.overlaps(b.live)) {
        size_t at = size_t(plan.offset[p->id]);
        busy.emplace_back(at, at + p->size);
      }
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto &[begin, end] : busy) {
      if (begin >= at + b.size)
        break; // the gap before this peer fits
      at = std::max(at, end);
    }
    plan.offset[b.id] = int64_t(at);
    plan.arenaBytes = std::max(plan.arenaBytes, at + b.size);
    placed.push_back(&b);
  }
  return plan;
}

} // namespace snnrt
