//===- EventFiles.cpp - event-camera recordings (N-MNIST's binary format) -===//
//
// (DVS128 Gesture's AEDAT 3.1 archive is read by DvsGesture.cpp.)
//
// N-MNIST (and other ATIS/DVS recordings distributed the same way) store one
// recording per file, 5 bytes per event: x (8 bits), y (8 bits), polarity
// (1 bit, 1 = ON) and a 23-bit timestamp in microseconds, big-endian. A
// dataset is a directory of class folders named by their label (0/, 1/,
// ...); the N-MNIST archive holds Train/ and Test/ folders of those. Events
// become channels p * S * S + y * S + x of a [2, S, S] frame per step (the
// layout of SpikingJelly's and Tonic's frames), binned over --spike-duration
// seconds, as spike files are.
//
//===----------------------------------------------------------------------===//

#include "DvsGesture.h"
#include "snnrt/Dataset.h"
#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <sys/stat.h>

namespace snnrt {
namespace {

bool isDirectory(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// A class folder's label: its name, a non-negative integer; -1 otherwise.
int64_t classLabel(const std::string &name) {
  if (name.empty() || name.size() > 9 ||
      !std::all_of(name.begin(), name.end(), ::isdigit))
    return -1;
  return std::stoll(name);
}

bool hasClassFolders(const std::string &dir) {
  for (const std::string &name : entries(dir))
    if (classLabel(name) >= 0 && isDirectory(dir + "/" + name))
      return true;
  return false;
}

/// `dir` itself, or its Train/Test folder for `split` when it holds them.
std::string splitFolder(const std::string &dir, const std::string &split) {
  const char *names[2][2] = {{"Train", "train"}, {"Test", "test"}};
  for (const char *name : names[split == "test" ? 1 : 0])
    if (isDirectory(dir + "/" + name))
      return dir + "/" + name;
  return dir;
}

void readRecording(const std::string &path, size_t side, size_t sampleSize,
                   int64_t steps, double duration,
                   std::vector<uint32_t> &events) {
  std::string bytes = readFile(path, "recording");
  if (bytes.size() % 5 != 0)
    throw Error(path + ": " + std::to_string(bytes.size()) +
                " bytes is not a whole number of 5-byte events (N-MNIST's "
                "binary format: x, y, polarity and a 23-bit timestamp)");
  const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
  for (size_t i = 0; i < bytes.size(); i += 5) {
    size_t x = b[i], y = b[i + 1], p = b[i + 2] >> 7;
    uint32_t us = (uint32_t(b[i + 2] & 0x7f) << 16) |
                  (uint32_t(b[i + 3]) << 8) | b[i + 4];
    if (x >= side || y >= side)
      throw Error(path + ": event " + std::to_string(i / 5) + " at (x " +
                  std::to_string(x) + ", y " + std::to_string(y) +
                  ") is outside the model's " + std::to_string(side) + "x" +
                  std::to_string(side) + " sensor (its input takes [2, " +
                  std::to_string(side) + ", " + std::to_string(side) +
                  "] per step)");
    double bin = std::floor(double(us) * 1e-6 / duration * double(steps));
    if (bin >= double(steps))
      continue; // after the window
    events.push_back(static_cast<uint32_t>(
        int64_t(bin) * sampleSize + (p * side + y) * side + x));
  }
}
} // namespace

bool isEventDirectory(const std::string &dir) {
  return isDirectory(dir) &&
         (hasClassFolders(dir) || hasClassFolders(splitFolder(dir, "train")) ||
          isDvsGestureDirectory(dir));
}

bool eventDirectoryHasTestSplit(const std::string &dir) {
  if (isDvsGestureDirectory(dir))
    return dvsGestureHasTestSplit(dir);
  std::string test = splitFolder(dir, "test");
  return test != dir && hasClassFolders(test);
}

Dataset loadEventDirectory(const std::string &dir, const std::string &split,
                           size_t sampleSize, int64_t steps, double duration) {
  if (!(duration > 0))
    throw Error("--spike-duration must be positive, got " +
                std::to_string(duration));
  if (isDvsGestureDirectory(dir))
    return loadDvsGesture(dir, split, sampleSize, steps, duration);
  size_t side = static_cast<size_t>(std::lround(std::sqrt(sampleSize / 2.0)));
  if (2 * side * side != sampleSize || side > 256)
    throw Error(dir + ": an event-camera dataset feeds a [2, S, S] frame per "
                "step (polarity, y, x; S <= 256), but the model's input takes " +
                std::to_string(sampleSize) + " values per step");
  std::string root = splitFolder(dir, split);
  Dataset d;
  d.source = root;
  d.sampleSize = sampleSize;
  for (const std::string &name : entries(root)) {
    int64_t label = classLabel(name);
    if (label < 0 || !isDirectory(root + "/" + name))
      continue;
    for (const std::string &file : entries(root + "/" + name)) {
      if (file.size() < 4 || file.compare(file.size() - 4, 4, ".bin") != 0)
        continue;
      d.events.emplace_back();
      readRecording(root + "/" + name + "/" + file, side, sampleSize, steps,
                    duration, d.events.back());
      d.labels.push_back(static_cast<int32_t>(label));
    }
  }
  d.count = static_cast<int64_t>(d.events.size());
  if (d.count == 0)
    throw Error(root + ": no recordings (expected class folders 0/, 1/, ... "
                       "holding .bin files, N-MNIST's layout)");
  return d;
}

} // namespace snnrt
