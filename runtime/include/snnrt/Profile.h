//===- Profile.h - time per op kind (snn-run --profile) ---------*- C++ -*-===//
//
// Shared by the CPU executor and the CUDA device: both sum the time of each
// op per program and op kind, and print the same table when they end.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_PROFILE_H
#define SNNRT_PROFILE_H

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace snnrt {

/// program -> op kind ("neuron lif", "conv2d", ...) -> (total ms, calls).
using ProfileTable =
    std::map<std::string, std::map<std::string, std::pair<double, long>>>;

/// The row of an op of kind `kind` with attributes `attrs`: the kind, a
/// neuron's model, a kernel op's kernel (its launches' kernels joined by
/// "+").
inline std::string profileKey(const std::string &kind,
                              const nlohmann::json &attrs) {
  std::string key = kind;
  auto name = [&](const nlohmann::json &launch) {
    return launch.contains("kernel") && launch["kernel"].is_string()
               ? launch["kernel"].get<std::string>()
               : std::string("?");
  };
  if (attrs.contains("model") && attrs["model"].is_string())
    key += " " + attrs["model"].get<std::string>();
  if (kind != "kernel")
    return key;
  if (!attrs.contains("launches") || !attrs["launches"].is_array())
    return key + " " + name(attrs);
  std::string names;
  for (const nlohmann::json &launch : attrs["launches"])
    names += (names.empty() ? "" : "+") + name(launch);
  return key + " " + names;
}

inline void addToProfile(ProfileTable &table, const std::string &program,
                         const std::string &kind, double ms) {
  auto &slot = table[program][kind];
  slot.first += ms;
  ++slot.second;
}

/// One block per program, op kinds by decreasing time, on stderr.
inline void printProfile(const std::string &device, const ProfileTable &table) {
  for (const auto &[program, kinds] : table) {
    double total = 0;
    std::vector<std::pair<double, std::string>> rows;
    for (const auto &[kind, v] : kinds) {
      total += v.first;
      rows.emplace_back(v.first, kind);
    }
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "snnrt profile (%s) %s: %.3f ms of ops in all\n",
                 device.c_str(), program.c_str(), total);
    for (const auto &[ms, kind] : rows) {
      long calls = kinds.at(kind).second;
      std::fprintf(stderr, "  %-28s %9.3f ms %5.1f%% %8ld calls %8.2f us/call\n",
                   kind.c_str(), ms, 100.0 * ms / std::max(total, 1e-12), calls,
                   1e3 * ms / double(std::max(calls, 1L)));
    }
  }
}

} // namespace snnrt

#endif // SNNRT_PROFILE_H
