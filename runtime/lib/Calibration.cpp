//===- Calibration.cpp - measured crossovers of event-driven layers -------===//
//
// calibration.json (docs/artifact-format.md, "calibration.json"): reading,
// checking and applying an architecture's entry, measuring one, merging it
// into the file.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Calibration.h"

#include "snnrt/Error.h"
#include "snnrt/Executor.h"
#include "snnrt/Formats.h"
#include "snnrt/Trainer.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using json = nlohmann::json;

namespace snnrt {

std::string hostCpuArch() {
#if defined(__x86_64__)
  std::string arch = "cpu-x86_64";
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  if (__builtin_cpu_supports("x86-64-v4"))
    return arch + "-v4";
#endif
#if defined(__GNUC__)
  if (__builtin_cpu_supports("x86-64-v3"))
    return arch + "-v3";
  if (__builtin_cpu_supports("x86-64-v2"))
    return arch + "-v2";
#endif
  return arch;
#elif defined(__aarch64__)
  return "cpu-aarch64";
#else
  return "cpu";
#endif
}

const EventCrossover *EventCrossovers::find(const std::string &layer,
                                            const std::string &direction) const {
  for (const EventCrossover &c : layers)
    if (c.layer == layer && c.direction == direction)
      return &c;
  return nullptr;
}

namespace {

const char *kFormat = "snn-calibration";

std::string calibrationPath(const Module &m) {
  return m.dir + "/calibration.json";
}

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The file, checked: {"format", "version": 1, "entries": {ARCH: {"arch",
/// "device", "date", "manifest_hash", "layers": {LAYER: {DIRECTION:
/// {"crossover": d in [0, 1], ...}}}}}}. Anything else: one Error naming
/// the file and the first problem.
json readCalibrationFile(const std::string &path) {
  json j;
  try {
    j = json::parse(readFile(path, "calibration file"));
  } catch (const json::exception &e) {
    throw Error(path + ": not valid JSON: " + e.what() +
                " (rerun snn-run MODULE calibrate, or delete the file)");
  }
  auto bad = [&](const std::string &what) {
    return Error(path + ": malformed calibration file: " + what +
                 " (rerun snn-run MODULE calibrate, or delete the file)");
  };
  if (!j.is_object() || j.value("format", json()) != json(kFormat))
    throw bad(std::string("\"format\" must be \"") + kFormat + "\"");
  if (j.value("version", json()) != json(1))
    throw bad("\"version\" must be 1");
  if (!j.contains("entries") || !j["entries"].is_object())
    throw bad("\"entries\" must be an object of architectures");
  for (auto &[arch, entry] : j["entries"].items()) {
    std::string where = "entry '" + arch + "'";
    if (!entry.is_object())
      throw bad(where + " is not an object");
    for (const char *field : {"arch", "device", "date", "manifest_hash"})
      if (!entry.contains(field) || !entry[field].is_string())
        throw bad(where + ": \"" + field + "\" must be a string");
    if (entry["arch"] != arch)
      throw bad(where + ": its \"arch\" is '" +
                entry["arch"].get<std::string>() + "'");
    if (!entry.contains("layers") || !entry["layers"].is_object())
      throw bad(where + ": \"layers\" must be an object");
    for (auto &[layer, directions] : entry["layers"].items()) {
      if (!directions.is_object())
        throw bad(where + ", layer '" + layer + "' is not an object");
      for (auto &[direction, c] : directions.items()) {
        std::string at = where + ", layer '" + layer + "' " + direction;
        if (direction != "forward" && direction != "backward")
          throw bad(where + ", layer '" + layer + "': '" + direction +
                    "' is neither forward nor backward");
        if (!c.is_object() || !c.contains("crossover") ||
            !c["crossover"].is_number())
          throw bad(at + ": \"crossover\" must be a number");
        double d = c["crossover"].get<double>();
        if (!(d >= 0.0 && d <= 1.0))
          throw bad(at + ": crossover " + std::to_string(d) +
                    " is not a density in [0, 1]");
      }
    }
  }
  return j;
}

int32_t limitFor(double crossover, int64_t elements) {
  double limit = std::floor(crossover * double(elements));
  return static_cast<int32_t>(std::min<double>(limit, INT32_MAX));
}

void setLimit(Executor &exec, ProgramRunner &runner, int id, int32_t limit) {
  std::memcpy(exec.data(id), &limit, sizeof limit);
  runner.upload(id);
}

std::string programName(const std::string &layer,
                        const std::string &direction) {
  return "calibrate:" + layer + ":" + direction;
}

/// The CPU's model name (/proc/cpuinfo), or "" where there is none.
std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "";
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace

EventCrossovers applyCalibration(Executor &exec, ProgramRunner &runner) {
  const Module &m = exec.module();
  EventCrossovers result;
  for (const EventSite &site : m.eventSites)
    if (!result.find(site.layer, site.direction))
      result.layers.push_back({site.layer, site.direction, site.crossover,
                               false});
  if (m.eventSites.empty())
    return result;
  std::string path = calibrationPath(m), arch = runner.arch();
  if (!fileExists(path)) {
    result.source = "compile-time (no " + path + ")";
    return result;
  }
  json file = readCalibrationFile(path);
  const json &entries = file["entries"];
  if (!entries.contains(arch)) {
    std::string have;
    for (auto &[key, _] : entries.items())
      have += (have.empty() ? "" : ", ") + key;
    result.source = "compile-time (" + path + " has no entry for " + arch +
                    (have.empty() ? "" : "; it has " + have) + ")";
    return result;
  }
  const json &entry = entries[arch];
  if (entry["manifest_hash"] != manifestHash(m)) {
    result.source = "compile-time (the " + arch + " entry of " + path +
                    " was measured for another build of the module; "
                    "recalibrate)";
    return result;
  }
  for (EventCrossover &c : result.layers) {
    const json &layers = entry["layers"];
    if (layers.contains(c.layer) && layers[c.layer].contains(c.direction)) {
      c.crossover = layers[c.layer][c.direction]["crossover"].get<double>();
      c.calibrated = true;
    }
  }
  // A site without a dense path keeps its event-only limit.
  for (const EventSite &site : m.eventSites) {
    const EventCrossover *c = result.find(site.layer, site.direction);
    if (c->calibrated && site.denseFallback)
      setLimit(exec, runner, site.limit, limitFor(c->crossover, site.elements));
  }
  for (EventCrossover &c : result.layers)
    for (const EventSite &site : m.eventSites)
      if (site.layer == c.layer && site.direction == c.direction &&
          !site.denseFallback) {
        c.calibrated = false;
        c.crossover = site.crossover;
      }
  result.source = "calibrated for " + arch + " (" + path + ", " +
                  entry["date"].get<std::string>() + ")";
  return result;
}

json addCalibrationPrograms(json manifest, const std::string &dir) {
  Module m = Module::parse(manifest, dir);
  json &programs = manifest["programs"];
  for (const EventSite &site : m.eventSites) {
    std::string name = programName(site.layer, site.direction);
    if (site.opIndex < 0 || !site.denseFallback || programs.contains(name))
      continue;
    // The density op and every later op of its program that reads the
    // decision: the layer's kernels and its dense op. A count that the
    // neuron op does (spike_count) runs as its own density op: the neuron
    // op would overwrite the random input.
    const json &source = programs[site.program];
    const std::vector<Op> &ops = m.program(site.program);
    json layerOps = json::array(
        {site.fusedDensity.is_null() ? source[site.opIndex]
                                     : site.fusedDensity});
    for (size_t i = site.opIndex + 1; i < ops.size(); ++i)
      if (std::find(ops[i].in.begin(), ops[i].in.end(), site.decision) !=
          ops[i].in.end())
        layerOps.push_back(source[i]);
    programs[name] = std::move(layerOps);
  }
  return manifest;
}

double crossoverFromSweep(const std::vector<double> &densities,
                          const std::vector<double> &eventMs,
                          const std::vector<double> &denseMs) {
  int last = -1;
  for (size_t i = 0; i < densities.size(); ++i)
    if (eventMs[i] < denseMs[i])
      last = static_cast<int>(i);
  if (last < 0)
    return 0.0;
  if (last + 1 == static_cast<int>(densities.size()))
    return densities[last];
  // Where event - dense crosses zero, linearly between the two densities.
  double gain = denseMs[last] - eventMs[last];
  double loss = eventMs[last + 1] - denseMs[last + 1];
  return densities[last] +
         (densities[last + 1] - densities[last]) * gain / (gain + loss);
}

std::vector<LayerCalibration> measureCrossovers(Executor &exec,
                                                ProgramRunner &runner,
                                                const CalibrateOptions &options) {
  const Module &m = exec.module();
  std::vector<LayerCalibration> result;
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  RunContext ctx{0.0f, 1, options.seed};
  auto timeRuns = [&](const std::string &program) {
    return millisecondsPerCall(
        runner, [&] { runner.run(program, ctx); }, options.iterations);
  };
  for (const EventSite &site : m.eventSites) {
    std::string program = programName(site.layer, site.direction);
    if (!m.programs.count(program))
      continue;
    bool done = false;
    for (const LayerCalibration &c : result)
      done |= c.layer == site.layer && c.direction == site.direction;
    if (done)
      continue;
    LayerCalibration c;
    c.layer = site.layer;
    c.direction = site.direction;
    c.elements = site.elements;
    c.densities = options.densities;
    float *x = exec.data(site.input);
    // A backward's weight gradient on row lists also costs in proportion to
    // the density of the layer's input (compact_rows lists it): that input
    // gets spikes at the same density, a stand-in for the activity at which
    // gy has it.
    std::vector<int> listed;
    for (const Op &op : m.program(program))
      if (op.attrs.contains("of"))
        for (const auto &inner : op.attrs["of"])
          if (inner.value("op", "") == "compact_rows" &&
              inner["in"][0].get<int>() != site.input)
            listed.push_back(inner["in"][0].get<int>());
    for (double density : options.densities) {
      // Spikes are ones; a backward's output gradient has signed values.
      bool spikes = site.direction == "forward";
      for (int64_t i = 0; i < site.elements; ++i)
        x[i] = uniform(rng) < density
                   ? (spikes ? 1.0f : uniform(rng) - 0.5f + 1e-3f)
                   : 0.0f;
      runner.upload(site.input);
      for (int id : listed) {
        float *input = exec.data(id);
        for (size_t i = 0, n = m.tensors[id].numel(); i < n; ++i)
          input[i] = uniform(rng) < density ? 1.0f : 0.0f;
        runner.upload(id);
      }
      double best[2] = {INFINITY, INFINITY};
      // Alternating rounds: a drift of the machine's speed hits both paths.
      for (int round = 0; round < 3; ++round)
        for (int path = 0; path < 2; ++path) {
          setLimit(exec, runner, site.limit, path == 0 ? INT32_MAX : -1);
          runner.run(program, ctx); // warm-up; on CUDA, the graph capture
          runner.run(program, ctx);
          best[path] = std::min(best[path], timeRuns(program));
        }
      c.eventMs.push_back(best[0]);
      c.denseMs.push_back(best[1]);
    }
    c.crossover = crossoverFromSweep(c.densities, c.eventMs, c.denseMs);
    setLimit(exec, runner, site.limit, limitFor(site.crossover, site.elements));
    result.push_back(std::move(c));
  }
  return result;
}

std::string writeCalibration(const Module &module, ProgramRunner &runner,
                             const std::vector<LayerCalibration> &layers,
                             const CalibrateOptions &options) {
  std::string path = calibrationPath(module), arch = runner.arch();
  // Calibrations of several devices may finish at once: one at a time
  // reads, merges and replaces the file.
  int dir = ::open(module.dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir < 0 || ::flock(dir, LOCK_EX) != 0) {
    if (dir >= 0)
      ::close(dir);
    throw Error(module.dir + ": cannot lock the module directory to write "
                             "calibration.json (" +
                std::strerror(errno) + ")");
  }
  try {
    json file = fileExists(path)
                    ? readCalibrationFile(path)
                    : json{{"format", kFormat}, {"version", 1},
                           {"entries", json::object()}};
    std::string device = runner.describe();
    if (arch.rfind("cpu", 0) == 0 && !cpuModelName().empty())
      device += " on " + cpuModelName();
    json entry = {{"arch", arch},
                  {"device", device},
                  {"date", utcNow()},
                  {"manifest_hash", manifestHash(module)},
                  {"iterations", options.iterations},
                  {"densities", options.densities},
                  {"layers", json::object()}};
    for (const LayerCalibration &c : layers)
      entry["layers"][c.layer][c.direction] = {{"crossover", c.crossover},
                                               {"elements", c.elements},
                                               {"event_ms", c.eventMs},
                                               {"dense_ms", c.denseMs}};
    file["entries"][arch] = std::move(entry);
    writeFileAtomically(path, file.dump(2) + "\n");
  } catch (...) {
    ::close(dir); // releases the lock
    throw;
  }
  ::close(dir);
  return path;
}

} // namespace snnrt
