//===- Dataset.h - samples and labels in host memory, and encoders -*- C++ -*-===//
//
// The data side of snn-run: IDX (MNIST/Fashion-MNIST, optionally gzipped)
// and .npy files, and the encoders that turn samples into the module's
// [T, B, sample...] input. Every random choice (data order, rate-coded
// spikes) is a pure function of (seed, epoch, batch), so a resumed run sees
// exactly the data an uninterrupted run would.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_DATASET_H
#define SNNRT_DATASET_H

#include <cstdint>
#include <string>
#include <vector>

namespace snnrt {

struct Dataset {
  std::string source;         ///< for messages
  int64_t count = 0;          ///< samples
  size_t sampleSize = 0;      ///< values per sample (per step if timeMajor)
  int64_t steps = 0;          ///< timeMajor: T of the stored series
  bool timeMajor = false;     ///< samples are [T, N, sample] (pre-encoded)
  std::vector<float> samples; ///< [N, sample] or [T, N, sample]
  std::vector<int32_t> labels; ///< empty when unlabeled
  /// Spike files: per sample, its spikes as step * sampleSize + channel
  /// (samples is empty). A batch holds the spike counts per step and channel.
  std::vector<std::vector<uint32_t>> events;

  bool empty() const { return count == 0; }
  /// Value `i` of sample `n` at step `t`.
  float at(int64_t t, int64_t n, size_t i) const {
    return timeMajor ? samples[(t * count + n) * sampleSize + i]
                     : samples[n * sampleSize + i];
  }
};

/// Reads `images` (.npy: [N, sample...] or pre-encoded [T, N, sample...];
/// anything else: IDX, bytes scaled by 1/255) and optional `labels` (.npy or
/// IDX). `sampleSize` and `steps` are the module's; a mismatch is an error
/// naming the file.
Dataset loadDataset(const std::string &images, const std::string &labels,
                    size_t sampleSize, int64_t steps);

/// A spike file in the layout of the Spiking Heidelberg Digits (HDF5:
/// /spikes/times [s] and /spikes/units as one variable-length array per
/// sample, /labels): spike times are binned into `steps` steps over
/// `duration` seconds (later spikes are dropped), units must be below
/// `sampleSize`. Needs a runtime built with libhdf5.
Dataset loadSpikeFile(const std::string &path, size_t sampleSize,
                      int64_t steps, double duration);

/// Whether `path` names an HDF5 spike file (.h5 or .hdf5).
bool isSpikeFile(const std::string &path);

/// An event-camera dataset in N-MNIST's layout: class folders named by their
/// label (DIR/0/*.bin, DIR/1/*.bin, ...), each file one recording of 5-byte
/// events (x, y, polarity, 23-bit microsecond timestamp). When DIR holds
/// Train/ and Test/ folders, `split` ("train" or "test") picks one. Events are
/// binned into `steps` steps over `duration` seconds as channels
/// p * S * S + y * S + x of a [2, S, S] input (sampleSize = 2 S^2).
Dataset loadEventDirectory(const std::string &dir, const std::string &split,
                           size_t sampleSize, int64_t steps, double duration);

/// The same for the DVS128 Gesture archive (DvsGesture/: AEDAT 3.1
/// recordings, <trial>_labels.csv, trials_to_train.txt/trials_to_test.txt):
/// one sample per labelled gesture, binned from its start; S divides 128.
///
/// Whether `dir` is such a dataset (class folders, Train/ holding them, or
/// the DVS128 Gesture archive).
bool isEventDirectory(const std::string &dir);
/// Whether it has a test split (Test/ folder, or trials_to_test.txt).
bool eventDirectoryHasTestSplit(const std::string &dir);

/// One split of an IDX directory: "train" or "t10k"
/// (DIR/<split>-images-idx3-ubyte[.gz] and the labels beside it).
Dataset loadIdxSplit(const std::string &dir, const std::string &split,
                     size_t sampleSize, int64_t steps);

/// `count` samples of seeded uniform [0, 1) values, unlabeled.
Dataset randomDataset(int64_t count, size_t sampleSize, uint64_t seed);

/// Keeps the first `limit` samples (limit < 0: all).
void limitDataset(Dataset &data, int64_t limit);

/// Direct: the value at every step. Rate: Bernoulli spikes with p = value
/// (seeded). Latency: one spike per input, the earlier the larger the value:
/// at step round((1 - value) (T - 1)), none for a value <= 0.
enum class Encoder { Direct, Rate, Latency };
Encoder parseEncoder(const std::string &name);

/// A 64-bit mix of the values (splitmix64 chained): the seeds of the data
/// order, the encoders and dropout.
uint64_t mixSeed(std::initializer_list<uint64_t> values);

/// The order of the samples in epoch `epoch` (a seeded Fisher-Yates shuffle,
/// or 0..count-1 when !shuffle).
std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle);

/// Writes one batch into `input` [T, B, sample]: samples order[first..first+
/// valid), padding rows zero. Rate coding draws Bernoulli(p = value) from
/// `stream` (e.g. mixSeed({seed, epoch, batch})). Spike files are spikes
/// already: their counts are written whatever the encoder.
/// A shard of a larger batch (data parallel: rank r writes rows
/// [r*B, (r+1)*B) of a global batch of `globalRows`) passes the global batch
/// size and its first row, so that rate coding draws the same numbers for a
/// sample as one process encoding the whole global batch.
void encodeBatch(const Dataset &data, const std::vector<int64_t> &order,
                 int64_t first, int64_t valid, int64_t T, int64_t B,
                 Encoder encoder, uint64_t stream, float *input,
                 int64_t globalRows = 0, int64_t firstRow = 0);

} // namespace snnrt

#endif // SNNRT_DATASET_H
