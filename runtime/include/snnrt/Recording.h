//===- Recording.h - recording neuron state during inference ---*- C++ -*-===//
//
// snn-run MODULE infer --record lif1,lif2:v --record-output FILE: the
// spike, membrane and charge traces [T, B, ...] of named layers, as
// snnTorch/Norse users record `spk` and `mem`.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_RECORDING_H
#define SNNRT_RECORDING_H

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace snnrt {

/// One recorded trace: `<layer>.<s|v|h>` and the tensor [T, B, ...] that
/// the infer program writes it to.
struct RecordTrace {
  std::string name;
  int tensor = -1;
  /// [T, N, ...] over the samples of a run (filled by evaluate()).
  std::vector<float> data;
};

/// Edits the manifest `j` (read from `where`) so that its `infer` program
/// also writes the traces that `spec` asks for, and returns them in the
/// order asked. `spec` is a comma-separated list of `LAYER[:QUANTITIES]`:
/// QUANTITIES is one or more of `s` (spikes), `v` (the membrane after the
/// step's reset), `h` (the membrane after charging, before the reset);
/// without it, every quantity the layer has; `all` names every layer.
/// Layer names are the manifest's (the ones spike rates are reported
/// under). An unknown layer or a quantity the layer lacks throws one
/// snnrt::Error listing what exists.
std::vector<RecordTrace> planRecording(nlohmann::json &j,
                                       const std::string &spec,
                                       const std::string &where);

} // namespace snnrt

#endif // SNNRT_RECORDING_H
