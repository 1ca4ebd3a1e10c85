//===- Calibration.h - measured crossovers of event-driven layers -*- C++ -*-===//
//
// An event-driven linear layer (forward or backward) runs its event-driven
// kernels while the nonzero count of its input is at most a limit, which the
// module holds in a one-word tensor (docs/artifact-format.md, "Event-driven
// linear layers"). The compiler sets it from a crossover density that is a
// target default; `snn-run MODULE calibrate` measures the crossover of each
// layer on a device and stores it in MODULE/calibration.json, per device
// architecture; at load the runtime replaces the limits by those of the
// current architecture's entry. The choice stays on the device: only the
// number in the limit tensor changes.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CALIBRATION_H
#define SNNRT_CALIBRATION_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace snnrt {

class Executor;
class ProgramRunner;
struct Module;

/// This machine's CPU as a calibration key: "cpu-x86_64-v3", "cpu-aarch64".
std::string hostCpuArch();

/// The crossover an event-driven layer (one direction) runs with.
struct EventCrossover {
  std::string layer, direction;
  double crossover = 0.0;
  bool calibrated = false; ///< false: the compile-time crossover
};

struct EventCrossovers {
  /// One per (layer, direction), in the order of the module's event sites.
  std::vector<EventCrossover> layers;
  /// Where the crossovers come from, one line for the report.
  std::string source;
  const EventCrossover *find(const std::string &layer,
                             const std::string &direction) const;
};

/// Reads MODULE/calibration.json when there is one, takes the entry of
/// `runner.arch()` and sets the limit tensor of every event site to
/// floor(crossover * elements) on the host and the device. Without a file,
/// an entry for this architecture, or an entry of this build of the module
/// (its manifest hash), the compile-time limits stay. A malformed file is
/// an Error naming it and what is wrong.
EventCrossovers applyCalibration(Executor &exec, ProgramRunner &runner);

/// The manifest with one more program per (layer, direction) that has a
/// dense path, "calibrate:LAYER:DIRECTION": the ops of its first top-level
/// event site (the density kernel, the event-driven kernels, the dense op).
nlohmann::json addCalibrationPrograms(nlohmann::json manifest,
                                      const std::string &dir);

struct CalibrateOptions {
  std::vector<double> densities; ///< ascending, in (0, 1]
  int64_t iterations = 10;       ///< timed runs per density, path and round
  uint64_t seed = 0;
};

/// The measurements of one (layer, direction).
struct LayerCalibration {
  std::string layer, direction;
  int64_t elements = 0;
  std::vector<double> densities, eventMs, denseMs;
  double crossover = 0.0;
};

/// Times the event-driven and the dense path of every calibration program
/// of the module (addCalibrationPrograms) on the runner's device at each
/// density: random input with that fraction of nonzeros, the path forced
/// through the limit tensor.
std::vector<LayerCalibration> measureCrossovers(Executor &exec,
                                                ProgramRunner &runner,
                                                const CalibrateOptions &options);

/// The largest density at which the event-driven path was faster,
/// interpolated linearly to the next density where it was not (0 when it
/// never was; the largest density when it always was).
double crossoverFromSweep(const std::vector<double> &densities,
                          const std::vector<double> &eventMs,
                          const std::vector<double> &denseMs);

/// Writes the entry of `runner.arch()` into MODULE/calibration.json, keeping
/// the entries of other architectures: under a lock on the module
/// directory, through a temporary file and a rename. Returns the path.
std::string writeCalibration(const Module &module, ProgramRunner &runner,
                             const std::vector<LayerCalibration> &layers,
                             const CalibrateOptions &options);

} // namespace snnrt

#endif // SNNRT_CALIBRATION_H
