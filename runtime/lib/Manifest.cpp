//===- Manifest.cpp - reading manifest.json -------------------------------===//

#include "snnrt/Manifest.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <fstream>
#include <sstream>

using nlohmann::json;

namespace snnrt {

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::U8:
    return 1;
  case DType::BF16:
    return 2;
  }
  return 4;
}

size_t TensorInfo::numel() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

std::string TensorInfo::shapeString() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

std::string Op::describe(size_t index) const {
  return "op #" + std::to_string(index) + " (" + kind + ")";
}

static DType parseDType(const std::string &s, const std::string &where) {
  if (s == "f32")
    return DType::F32;
  if (s == "i32")
    return DType::I32;
  if (s == "u8")
    return DType::U8;
  if (s == "bf16")
    return DType::BF16;
  if (s == "u32")
    return DType::U32;
  throw Error(where + ": unknown dtype '" + s +
              "' (expected f32, i32, u8, bf16 or u32)");
}

/// The ops of a program (or of a time loop's body), with every tensor id
/// checked.
static std::vector<Op> parseOps(const json &ops, const Module &m,
                                const std::string &where) {
  std::vector<Op> program;
  auto check = [&](const Op &op, const std::vector<int> &ids,
                   const char *what) {
    for (int id : ids)
      if (id < 0 || id >= static_cast<int>(m.tensors.size()))
        throw Error(where + " " + op.describe(program.size()) + " " + what +
                    " tensor id " + std::to_string(id) +
                    ", which does not exist");
  };
  for (const json &o : ops) {
    Op op;
    op.kind = o.at("op").get<std::string>();
    op.in = o.at("in").get<std::vector<int>>();
    op.out = o.at("out").get<std::vector<int>>();
    check(op, op.in, "reads");
    check(op, op.out, "writes");
    if (op.kind == "time_loop") {
      op.args = o.at("args").get<std::vector<int>>();
      op.yields = o.at("yields").get<std::vector<int>>();
      check(op, op.args, "has a block argument");
      check(op, op.yields, "yields");
      op.body = parseOps(o.at("body"), m,
                         where + " " + op.describe(program.size()) + " body");
    }
    op.attrs = o;
    op.attrs.erase("body"); // parsed above; not copied per step
    program.push_back(std::move(op));
  }
  return program;
}

json Module::readManifest(const std::string &dir) {
  std::string path = dir + "/manifest.json";
  std::ifstream in(path);
  if (!in)
    throw Error(path + ": cannot open the compiled module's manifest; compile "
                       "the model with snn-opt --snn-compile=\"output=" +
                dir + "\"");
  try {
    return json::parse(in);
  } catch (const json::exception &e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

Module Module::load(const std::string &dir) {
  return parse(readManifest(dir), dir);
}

json Module::selectRank(json j, const std::string &dir, int rank, int ranks) {
  if (!isTimeSplit(j))
    return j;
  std::string path = dir + "/manifest.json";
  try {
    const json &split = j.at("split_time");
    int parts = split.at("parts").get<int>();
    if (parts != ranks)
      throw Error(path + ": the module is split in time over " +
                  std::to_string(parts) +
                  " ranks (--snn-split-time), but this job has " +
                  std::to_string(ranks) + "; run it with mpirun -np " +
                  std::to_string(parts) + " snn-run ... (or --nproc " +
                  std::to_string(parts) + ")");
    int set = split.at("ranks").at(rank).get<int>();
    json programs = j.at("program_sets").at(set);
    programs["split_rank"] = {{"parts", parts},
                              {"steps", split.at("steps").get<int>()},
                              {"rank", rank}};
    return programs;
  } catch (const json::exception &e) {
    throw Error(path + ": malformed split_time or program_sets: " + e.what());
  }
}

FusedCount readFusedCount(const json &attrs, const std::vector<int> &in,
                          const std::vector<int> &out,
                          const std::string &where) {
  FusedCount count;
  auto it = attrs.find("spike_count");
  if (it == attrs.end())
    return count;
  const json &c = *it;
  if (!c.is_object() || !c.contains("limit") || !c.contains("decision") ||
      !c["limit"].is_number_integer() || !c["decision"].is_number_integer())
    throw Error(where + ": 'spike_count' must be {\"limit\": id, "
                        "\"decision\": id, \"density\": op}");
  count.limit = c["limit"].get<int>();
  count.decision = c["decision"].get<int>();
  if (std::find(in.begin(), in.end(), count.limit) == in.end() ||
      std::find(out.begin(), out.end(), count.decision) == out.end())
    throw Error(where + ": the 'spike_count' limit must be an input and its "
                        "decision an output of the op");
  if (c.contains("bits")) {
    if (!c["bits"].is_number_integer() ||
        std::find(out.begin(), out.end(), c["bits"].get<int>()) == out.end())
      throw Error(where + ": the 'spike_count' bits must be an output of the "
                          "op");
    count.bits = c["bits"].get<int>();
  }
  return count;
}

LinearGrad readLinearGrad(const json &attrs, int64_t gyElements,
                          int64_t weightElements, const std::string &where) {
  auto it = attrs.find("linear_grad");
  if (it == attrs.end())
    return {};
  const json &g = *it;
  auto features = attrs.find("features");
  if (!g.is_object() || !g.contains("outputs") ||
      !g["outputs"].is_number_integer() || g["outputs"].get<int64_t>() <= 0 ||
      features == attrs.end() || !features->is_number_integer() ||
      features->get<int64_t>() <= 0)
    throw Error(where + ": 'linear_grad' must be {\"outputs\": C > 0} on a "
                        "neuron_bwd with \"features\" > 0");
  int64_t outputs = g["outputs"].get<int64_t>();
  int64_t f = features->get<int64_t>();
  if (weightElements != outputs * f)
    throw Error(where + ": the linear's weight (the last input) has " +
                std::to_string(weightElements) + " elements; 'linear_grad' "
                "needs outputs x features = " + std::to_string(outputs * f));
  if (gyElements % outputs != 0)
    throw Error(where + ": the linear's gy (the first input) has " +
                std::to_string(gyElements) +
                " elements, not a multiple of its " +
                std::to_string(outputs) + " outputs");
  return {outputs, f};
}

int readTimeMean(const json &attrs, const std::vector<int> &out,
                 const std::string &where) {
  auto it = attrs.find("time_mean");
  if (it == attrs.end())
    return -1;
  const json &m = *it;
  if (!m.is_object() || !m.contains("tensor") ||
      !m["tensor"].is_number_integer() || !m.contains("scale") ||
      !m["scale"].is_number())
    throw Error(where + ": 'time_mean' must be {\"tensor\": id, \"scale\": "
                        "s}");
  int id = m["tensor"].get<int>();
  if (std::find(out.begin(), out.end(), id) == out.end())
    throw Error(where + ": the 'time_mean' tensor must be an output of the "
                        "op");
  return id;
}

bool readGradBroadcast(const json &attrs, const std::string &where) {
  auto it = attrs.find("grad_broadcast");
  if (it == attrs.end())
    return false;
  if (!it->is_object() || !it->contains("scale") ||
      !(*it)["scale"].is_number())
    throw Error(where + ": 'grad_broadcast' must be {\"scale\": s}");
  return true;
}

/// The spike_density ops of `ops` (and of time loop bodies in it), and the
/// neuron ops that count for an event layer in their place. The host reads
/// their decisions after the program (snn-run's event path report).
static void collectEventSites(const std::vector<Op> &ops,
                              const std::string &program, bool topLevel,
                              Module &m, const std::string &path) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op &op = ops[i];
    if (op.kind == "time_loop")
      collectEventSites(op.body, program, false, m, path);
    const json *fused = nullptr;
    if ((op.kind == "neuron" || op.kind == "neuron_bwd") &&
        readFusedCount(op.attrs, op.in, op.out,
                       path + ": program '" + program + "' " +
                           op.describe(i))) {
      fused = &op.attrs["spike_count"];
      if (!fused->contains("density") || !(*fused)["density"].is_object())
        throw Error(path + ": program '" + program + "' " + op.describe(i) +
                    ": 'spike_count' needs its \"density\" op");
    }
    if (!fused && (op.kind != "kernel" || !op.attrs.contains("of")))
      continue;
    // The density op: the kernel op itself, or the one a neuron op does.
    Op density;
    if (fused) {
      const json &d = (*fused)["density"];
      density.kind = d.value("op", "");
      density.in = d.value("in", std::vector<int>{});
      density.out = d.value("out", std::vector<int>{});
      density.attrs = d;
    }
    const Op &source = fused ? density : op;
    if (!source.attrs.contains("of") || !source.attrs["of"].is_array())
      throw Error(path + ": program '" + program + "' " + op.describe(i) +
                  ": the fused count's density op needs \"of\"");
    for (const json &of : source.attrs.at("of")) {
      if (of.value("op", "") != "spike_density")
        continue;
      EventSite site;
      site.program = program;
      site.opIndex = topLevel ? static_cast<int>(i) : -1;
      // A kernel of more ops than the count (a counting compact_rows) names
      // the count's tensors in its "of" entry.
      std::vector<int> in = source.in, out = source.out;
      if (source.attrs.at("of").size() > 1 && of.contains("in") &&
          of.contains("out") && of["in"].is_array() && of["out"].is_array()) {
        in.clear();
        out.clear();
        for (const json &id : of["in"])
          in.push_back(id.is_number_integer() ? id.get<int>() : -1);
        for (const json &id : of["out"])
          out.push_back(id.is_number_integer() ? id.get<int>() : -1);
        bool kernelInputs = std::all_of(in.begin(), in.end(), [&](int id) {
          return std::find(source.in.begin(), source.in.end(), id) !=
                 source.in.end();
        });
        if (!kernelInputs)
          in.clear(); // rejected below
      }
      if (in.size() != 2 || out.size() != 1 ||
          std::find(source.out.begin(), source.out.end(), out[0]) ==
              source.out.end() ||
          m.tensor(in[1]).dtype != DType::I32 || m.tensor(in[1]).numel() != 1 ||
          (fused && (in[1] != op.attrs["spike_count"]["limit"] ||
                     out[0] != op.attrs["spike_count"]["decision"])))
        throw Error(path + ": program '" + program + "' " + op.describe(i) +
                    ": spike_density needs the inputs (x, limit: one i32) "
                    "and the output decision (a fused count: those of "
                    "'spike_count'); recompile the module with this snn-opt");
      if (fused)
        site.fusedDensity = (*fused)["density"];
      site.layer = of.at("layer").get<std::string>();
      site.direction = of.at("direction").get<std::string>();
      site.input = in[0];
      site.limit = in[1];
      site.decision = out[0];
      // A spiking layer's row bits count 32 inputs a word ("elements").
      site.elements = of.value(
          "elements", static_cast<int64_t>(m.tensor(site.input).numel()));
      site.crossover = of.at("crossover").get<double>();
      site.denseFallback = of.value("dense_fallback", true);
      m.hostReads.push_back(site.decision);
      m.eventSites.push_back(std::move(site));
    }
  }
}

Module Module::parse(json j, const std::string &dir) {
  std::string path = dir + "/manifest.json";
  Module m;
  m.dir = dir;
  if (isTimeSplit(j))
    throw Error(path + ": the module is split in time over " +
                std::to_string(j["split_time"].value("parts", 0)) +
                " ranks (--snn-split-time): snn-run infer, grads and train "
                "run it under mpirun -np P (or --nproc P), P its number of "
                "parts; other commands do not run split modules yet");
  try {
    if (const json *split = j.contains("split_rank") ? &j["split_rank"] : nullptr) {
      m.split.parts = split->at("parts").get<int>();
      m.split.steps = split->at("steps").get<int>();
      m.split.rank = split->at("rank").get<int>();
      if (j.value("local_steps", -1) != m.split.length())
        throw Error(path + ": the program set of rank " +
                    std::to_string(m.split.rank) + " runs " +
                    std::to_string(j.value("local_steps", -1)) +
                    " steps, but its range of the split has " +
                    std::to_string(m.split.length()));
    }
    if (j.value("format", "") != "snn-module")
      throw Error(path + ": not an snn-mlir compiled module (format is '" +
                  j.value("format", "") + "')");
    if (j.value("version", 0) != 1)
      throw Error(path + ": unsupported module version " +
                  std::to_string(j.value("version", 0)) +
                  "; recompile it with this release's snn-opt");
    m.timeSteps = j.at("time_steps").get<int>();
    m.batch = j.at("batch").get<int>();
    m.input = j.at("input").get<int>();
    m.output = j.at("output").get<int>();
    m.labels = j.value("labels", -1);
    m.loss = j.value("loss", -1);
    m.correct = j.value("correct", -1);
    if (j.contains("evaluate")) {
      const json &e = j.at("evaluate");
      m.evalLabels = e.at("labels").get<int>();
      m.evalLoss = e.at("loss").get<int>();
      m.evalCorrect = e.at("correct").get<int>();
    }
    for (const json &t : j.at("tensors")) {
      TensorInfo info;
      info.id = t.at("id").get<int>();
      info.name = t.at("name").get<std::string>();
      info.shape = t.at("shape").get<std::vector<int64_t>>();
      info.dtype = parseDType(t.value("dtype", "f32"), path + ": tensor '" +
                                                           info.name + "'");
      info.role = t.value("role", "activation");
      info.aliasOf = t.value("alias_of", -1);
      info.init = t.value("init", json());
      info.trainable = t.value("trainable", false);
      if (info.id != static_cast<int>(m.tensors.size()))
        throw Error(path + ": tensor ids must be 0, 1, 2, ... in order; '" +
                    info.name + "' has id " + std::to_string(info.id));
      m.tensors.push_back(std::move(info));
    }
    for (auto &[name, ops] : j.at("programs").items())
      m.programs[name] = parseOps(ops, m, path + ": program '" + name + "'");
    for (const char *name : {"infer", "train_forward", "backward"})
      if (m.programs.count(name))
        collectEventSites(m.programs[name], name, true, m, path);
    for (const json &l : j.value("spike_layers", json::array())) {
      m.spikeLayers.emplace_back(l.at("name").get<std::string>(),
                                 l.at("tensor").get<int>());
      bool bits = l.contains("train_bits");
      int train = l.value(bits ? "train_bits" : "train_tensor", -1);
      if (train >= static_cast<int>(m.tensors.size()))
        throw Error(path + ": spike layer '" + m.spikeLayers.back().first +
                    "' names training tensor id " + std::to_string(train) +
                    ", which does not exist");
      m.spikeLayerTrain.emplace_back(train, bits);
    }
    for (const json &l : j.value("event_layers", json::array())) {
      m.eventLayers.emplace_back(l.at("name").get<std::string>(),
                                 l.at("decision").get<int>());
      m.hostReads.push_back(m.eventLayers.back().second);
    }
    m.optimizer = j.value("optimizer", json());
    m.kernels = j.value("kernels", json());
  } catch (const json::exception &e) {
    throw Error(path + ": malformed manifest: " + e.what());
  }
  for (int id : {m.input, m.output})
    if (id < 0 || id >= static_cast<int>(m.tensors.size()))
      throw Error(path + ": input/output tensor id " + std::to_string(id) +
                  " does not exist");
  m.manifest = std::move(j);
  return m;
}

const TensorInfo &Module::tensor(int id) const { return tensors.at(id); }

const std::vector<Op> &Module::program(const std::string &name) const {
  auto it = programs.find(name);
  if (it == programs.end()) {
    std::string have;
    for (auto &[n, _] : programs)
      have += (have.empty() ? "" : ", ") + n;
    throw Error(dir + ": the module has no '" + name + "' program (it has: " +
                have + ")" +
                (name == "train_forward"
                     ? "; compile it after --snn-autodiff to train"
                     : ""));
  }
  return it->second;
}

} // namespace snnrt
