//===- DvsGesture.cpp - DVS128 Gesture recordings (AEDAT 3.1) -------------===//
//
// The DVS128 Gesture archive (DvsGesture/) holds one AEDAT 3.1 file per
// trial (userNN_<lighting>.aedat), a <trial>_labels.csv beside each
// (class, startTime_usec, endTime_usec; classes 1..11) and the lists
// trials_to_train.txt / trials_to_test.txt. An AEDAT 3.1 file is a text
// header of '#' lines ending in "#!END-HEADER\r\n", then packets: a 28-byte
// little-endian header (event type, source, event size, timestamp offset,
// timestamp overflow, capacity, event count, valid count) and the events.
// Polarity events (type 1, 8 bytes) hold a 32-bit word (bit 0 valid, bit 1
// polarity, bits 2-16 y, bits 17-31 x) and a 32-bit microsecond timestamp
// extended by the packet's overflow count. Other packet types are skipped.
//
// Each labelled interval is one sample, label class - 1. Its events are
// binned from the interval's start over --spike-duration seconds into the
// model's T steps (events past that window or the interval are dropped) as
// channels p * S * S + y' * S + x' of a [2, S, S] frame, where the 128x128
// sensor is pooled by 128 / S (S divides 128: 128, 64, 32, ...), as
// SpikingJelly's and Tonic's frames are laid out.
//
//===----------------------------------------------------------------------===//

#include "DvsGesture.h"
#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <sys/stat.h>

namespace snnrt {
namespace {

constexpr int64_t kSensor = 128;
constexpr size_t kPacketHeader = 28;

bool isFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

template <typename T> T readLE(const unsigned char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T)); // AEDAT is little-endian, as the hosts are
  return v;
}

struct PolarityEvent {
  int64_t us;
  uint32_t x, y, p;
};

/// Every valid polarity event of an AEDAT 3.1 file, in file order.
std::vector<PolarityEvent> readAedat(const std::string &path) {
  std::string bytes = readFile(path, "recording");
  const std::string end = "#!END-HEADER\r\n";
  if (bytes.compare(0, 10, "#!AEDAT-3.") != 0)
    throw Error(path + ": not an AEDAT 3.x file (it must start with "
                       "\"#!AEDAT-3.1\"; DVS128 Gesture's recordings do)");
  size_t pos = bytes.find(end);
  if (pos == std::string::npos)
    throw Error(path + ": the AEDAT header has no \"#!END-HEADER\" line");
  pos += end.size();
  const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
  std::vector<PolarityEvent> events;
  for (size_t packet = 0; pos < bytes.size(); ++packet) {
    if (bytes.size() - pos < kPacketHeader)
      throw Error(path + ": packet " + std::to_string(packet) + " at byte " +
                  std::to_string(pos) +
                  " is cut off inside its 28-byte "
                  "header (a truncated file?)");
    int16_t type = readLE<int16_t>(b + pos);
    int32_t size = readLE<int32_t>(b + pos + 4);
    int32_t overflow = readLE<int32_t>(b + pos + 12);
    int32_t count = readLE<int32_t>(b + pos + 20);
    if (size <= 0 || count < 0 ||
        uint64_t(size) * uint64_t(count) > bytes.size() - pos - kPacketHeader)
      throw Error(path + ": packet " + std::to_string(packet) + " at byte " +
                  std::to_string(pos) + " declares " + std::to_string(count) +
                  " events of " + std::to_string(size) +
                  " bytes, more than the file holds (a truncated file?)");
    const unsigned char *e = b + pos + kPacketHeader;
    if (type == 1) {
      if (size < 8)
        throw Error(path + ": polarity packet " + std::to_string(packet) +
                    " has " + std::to_string(size) +
                    "-byte events; AEDAT 3.1 polarity events have 8");
      for (int32_t i = 0; i < count; ++i, e += size) {
        uint32_t data = readLE<uint32_t>(e);
        if (!(data & 1))
          continue; // invalidated event
        int64_t us = (int64_t(overflow) << 31) | readLE<int32_t>(e + 4);
        events.push_back(
            {us, (data >> 17) & 0x7fff, (data >> 2) & 0x7fff, (data >> 1) & 1});
      }
    }
    pos += kPacketHeader + size_t(size) * size_t(count);
  }
  return events;
}

struct Interval {
  int32_t label;
  int64_t start, end;
};

std::vector<Interval> readLabels(const std::string &path) {
  std::istringstream in(readFile(path, "labels (class,startTime_usec,"
                                       "endTime_usec per gesture)"));
  std::vector<Interval> out;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    line = trimmed(line);
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0])))
      continue; // the header line
    long long c, s, e;
    char tail;
    if (std::sscanf(line.c_str(), "%lld,%lld,%lld%c", &c, &s, &e, &tail) != 3 ||
        c < 1 || c > 1000 || e < s)
      throw Error(path + ":" + std::to_string(n) +
                  ": expected \"class,"
                  "startTime_usec,endTime_usec\" with class >= 1 and end >= "
                  "start, got \"" +
                  line + "\"");
    out.push_back({int32_t(c - 1), s, e});
  }
  return out;
}

std::vector<std::string> readTrials(const std::string &path) {
  std::istringstream in(readFile(path, "trial list"));
  std::vector<std::string> trials;
  std::string line;
  while (std::getline(in, line))
    if (!(line = trimmed(line)).empty())
      trials.push_back(line);
  return trials;
}
} // namespace

bool isDvsGestureDirectory(const std::string &dir) {
  return isFile(dir + "/trials_to_train.txt");
}

bool dvsGestureHasTestSplit(const std::string &dir) {
  return isFile(dir + "/trials_to_test.txt");
}

Dataset loadDvsGesture(const std::string &dir, const std::string &split,
                       size_t sampleSize, int64_t steps, double duration) {
  int64_t side = std::lround(std::sqrt(sampleSize / 2.0));
  if (2 * side * side != int64_t(sampleSize) || side < 1 || kSensor % side != 0)
    throw Error(dir +
                ": DVS128 Gesture feeds a [2, S, S] frame per step "
                "(polarity, y, x) with S dividing 128 (128, 64, 32, ...), but "
                "the model's input takes " +
                std::to_string(sampleSize) + " values per step");
  std::string list =
      dir + (split == "test" ? "/trials_to_test.txt" : "/trials_to_train.txt");
  int64_t pool = kSensor / side;
  Dataset d;
  d.source = dir + " (" + split + ")";
  d.sampleSize = sampleSize;
  for (const std::string &trial : readTrials(list)) {
    std::string path = dir + "/" + trial;
    std::string stem =
        trial.size() > 6 && trial.compare(trial.size() - 6, 6, ".aedat") == 0
            ? path.substr(0, path.size() - 6)
            : path;
    std::vector<PolarityEvent> events = readAedat(path);
    for (const Interval &g : readLabels(stem + "_labels.csv")) {
      std::vector<uint32_t> sample;
      for (const PolarityEvent &e : events) {
        if (e.us < g.start || e.us >= g.end)
          continue;
        if (e.x >= kSensor || e.y >= kSensor)
          throw Error(path + ": an event at (x " + std::to_string(e.x) +
                      ", y " + std::to_string(e.y) +
                      ") lies outside the 128x128 sensor");
        double bin = std::floor(double(e.us - g.start) * 1e-6 / duration *
                                double(steps));
        if (bin >= double(steps))
          continue; // after the window
        sample.push_back(static_cast<uint32_t>(
            int64_t(bin) * int64_t(sampleSize) +
            (e.p * side + e.y / pool) * side + e.x / pool));
      }
      d.events.push_back(std::move(sample));
      d.labels.push_back(g.label);
    }
  }
  d.count = static_cast<int64_t>(d.events.size());
  if (d.count == 0)
    throw Error(list + ": no labelled gestures (the trials it lists need "
                       "their <trial>_labels.csv beside them)");
  return d;
}

} // namespace snnrt
