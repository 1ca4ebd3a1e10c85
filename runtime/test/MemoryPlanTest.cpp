//===- MemoryPlanTest.cpp - storage sharing between short-lived tensors ---===//
//
// Hand-built programs with known live ranges, and random programs where every
// pair of tensors that are live together is checked for disjoint storage.
//
//===----------------------------------------------------------------------===//

#include "snnrt/MemoryPlan.h"

#include <gtest/gtest.h>

#include <random>

using namespace snnrt;

namespace {

constexpr size_t kBytes = 4096;

int addTensor(Module &m, const std::string &role, std::string name = "") {
  TensorInfo t;
  t.id = static_cast<int>(m.tensors.size());
  t.name = name.empty() ? "%" + std::to_string(t.id) : name;
  t.shape = {int64_t(kBytes / 4)};
  t.role = role;
  m.tensors.push_back(t);
  return t.id;
}

Op op(std::vector<int> in, std::vector<int> out) {
  Op o;
  o.kind = "scale";
  o.in = std::move(in);
  o.out = std::move(out);
  return o;
}

/// input -> t[0] -> ... -> t[n-1] -> output, one op per arrow, in `infer`.
Module chain(int n, std::vector<int> &t) {
  Module m;
  m.input = addTensor(m, "input");
  for (int i = 0; i < n; ++i)
    t.push_back(addTensor(m, "activation"));
  m.output = addTensor(m, "activation");
  int prev = m.input;
  for (int i = 0; i <= n; ++i) {
    int next = i < n ? t[i] : m.output;
    m.programs["infer"].push_back(op({prev}, {next}));
    prev = next;
  }
  return m;
}

MemoryPlan plan(const Module &m) {
  return planMemory(
      m, [](const TensorInfo &t) { return t.bytes(); }, 256);
}

bool disjoint(const MemoryPlan &p, int a, int b) {
  return p.offset[a] + int64_t(kBytes) <= p.offset[b] ||
         p.offset[b] + int64_t(kBytes) <= p.offset[a];
}

TEST(MemoryPlan, ChainReusesDeadActivations) {
  std::vector<int> t;
  Module m = chain(3, t);
  int a = t[0], b = t[1], c = t[2];
  MemoryPlan p = plan(m);
  ASSERT_TRUE(p.planned(a) && p.planned(b) && p.planned(c));
  EXPECT_FALSE(p.planned(m.input));
  EXPECT_FALSE(p.planned(m.output));
  // a dies where b is born, so they differ; c reuses a's storage.
  EXPECT_TRUE(disjoint(p, a, b));
  EXPECT_TRUE(disjoint(p, b, c));
  EXPECT_EQ(p.offset[a], p.offset[c]);
  EXPECT_EQ(p.arenaBytes, 2 * kBytes);
  EXPECT_EQ(p.plannedBytes, 3 * kBytes);
}

TEST(MemoryPlan, SavedTensorsLiveUntilBackward) {
  Module m;
  int x = addTensor(m, "input"), w = addTensor(m, "param", "w"),
      h = addTensor(m, "saved"), s = addTensor(m, "activation"),
      z = addTensor(m, "activation"), loss = addTensor(m, "loss"),
      gz = addTensor(m, "grad"), gs = addTensor(m, "grad"),
      gw = addTensor(m, "grad", "grad:w");
  m.tensors[gw].init = nullptr;
  m.input = x;
  m.loss = loss;
  m.output = z;
  m.programs["train_forward"] = {op({x, w}, {s, h}), op({s}, {z})};
  m.programs["backward"] = {op({z}, {loss, gz}), op({gz}, {gs}),
                            op({gs, h}, {gw})};
  MemoryPlan p = plan(m);
  for (int id : {x, w, loss, gw, z})
    EXPECT_FALSE(p.planned(id)) << m.tensors[id].name;
  // h (forward -> backward) is live while every other scratch tensor is.
  for (int id : {s, gz, gs})
    EXPECT_TRUE(disjoint(p, h, id)) << m.tensors[id].name;
  // s dies in the forward: the backward's gradients may take its place.
  EXPECT_EQ(p.offset[s], p.offset[gz]);
}

TEST(MemoryPlan, InitializedAndAliasedTensors) {
  Module m;
  int x = addTensor(m, "input"), a = addTensor(m, "activation"),
      v = addTensor(m, "activation"), b = addTensor(m, "activation"),
      c = addTensor(m, "activation"), y = addTensor(m, "activation");
  m.tensors[v].aliasOf = a; // a flatten of a: shares a's storage and range
  m.tensors[c].init = {{"kind", "zeros"}};
  m.input = x;
  m.output = y;
  m.programs["infer"] = {op({x}, {a}), op({a}, {b}), op({v, b}, {c}),
                         op({c}, {y})};
  MemoryPlan p = plan(m);
  EXPECT_FALSE(p.planned(v)); // aliases follow their owner
  EXPECT_FALSE(p.planned(c)); // its initial value must survive
  ASSERT_TRUE(p.planned(a) && p.planned(b));
  EXPECT_TRUE(disjoint(p, a, b)); // a is read through v with b
}

TEST(MemoryPlan, SpikeLayersLiveToTheEndOfTheirProgram) {
  std::vector<int> t;
  Module m = chain(3, t);
  int s = t[0], b = t[2];
  m.spikeLayers = {{"lif1", s}};
  MemoryPlan p = plan(m);
  // Without the host's read after the program b could reuse s.
  EXPECT_TRUE(disjoint(p, s, b));
}

TEST(MemoryPlan, RecordedTensorsLiveToTheEndOfTheirProgram) {
  std::vector<int> t;
  Module m = chain(3, t);
  int s = t[0], b = t[2];
  m.hostReads = {s}; // snn-run --record reads it after the program
  MemoryPlan p = plan(m);
  EXPECT_TRUE(disjoint(p, s, b));
}

TEST(MemoryPlan, TimeLoopBodyIsLiveForTheWholeLoop) {
  Module m;
  int x = addTensor(m, "input"), arg = addTensor(m, "activation"),
      inner = addTensor(m, "activation"), out = addTensor(m, "activation"),
      y = addTensor(m, "activation");
  m.input = x;
  m.output = y;
  Op loop = op({x}, {out});
  loop.kind = "time_loop";
  loop.args = {arg};
  loop.yields = {inner};
  loop.body = {op({arg}, {inner})};
  m.programs["infer"] = {loop, op({out}, {y})};
  MemoryPlan p = plan(m);
  EXPECT_TRUE(disjoint(p, arg, inner));
  EXPECT_TRUE(disjoint(p, arg, out));
  EXPECT_TRUE(disjoint(p, inner, out));
}

/// Random programs: whatever the plan, two tensors whose live ranges meet
/// (recomputed here from the op lists) never share a byte.
TEST(MemoryPlan, RandomProgramsNeverOverlapLiveTensors) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Module m;
    int n = 4 + int(rng() % 40);
    std::vector<size_t> size(n);
    for (int i = 0; i < n; ++i) {
      addTensor(m, rng() % 5 ? "activation" : "saved");
      m.tensors[i].shape = {int64_t(1 + rng() % 3000)};
    }
    m.input = 0;
    std::vector<Op> ops;
    int numOps = 1 + int(rng() % 30);
    for (int k = 0; k < numOps; ++k) {
      std::vector<int> in, out;
      for (int j = 0; j < 1 + int(rng() % 3); ++j)
        in.push_back(int(rng() % n));
      out.push_back(int(rng() % n));
      ops.push_back(op(in, out));
    }
    size_t half = ops.size() / 2;
    m.programs["train_forward"].assign(ops.begin(), ops.begin() + half);
    m.programs["backward"].assign(ops.begin() + half, ops.end());
    MemoryPlan p = planMemory(
        m, [](const TensorInfo &t) { return t.bytes(); }, 64);
    std::vector<int> first(n, 1 << 30), last(n, -1);
    for (int k = 0; k < numOps; ++k) {
      for (int id : ops[k].in)
        first[id] = std::min(first[id], k), last[id] = std::max(last[id], k);
      for (int id : ops[k].out)
        first[id] = std::min(first[id], k), last[id] = std::max(last[id], k);
    }
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        if (!p.planned(a) || !p.planned(b))
          continue;
        if (first[a] > last[b] || first[b] > last[a])
          continue;
        int64_t ea = p.offset[a] + int64_t(m.tensors[a].bytes());
        int64_t eb = p.offset[b] + int64_t(m.tensors[b].bytes());
        ASSERT_TRUE(ea <= p.offset[b] || eb <= p.offset[a])
            << "trial " << trial << ": tensors " << a << " and " << b;
        ASSERT_LE(size_t(std::max(ea, eb)), p.arenaBytes);
      }
  }
}

} // namespace
