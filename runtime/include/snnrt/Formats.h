//===- Formats.h - .npy, safetensors and IDX files --------------*- C++ -*-===//

#ifndef SNNRT_FORMATS_H
#define SNNRT_FORMATS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace snnrt {

/// A dense array read from a file, converted to float32.
struct HostArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// .npy (format 1.0/2.0, little-endian f32/f64/u8/i32/i64, C order).
HostArray readNpy(const std::string &path);
/// Writes float32 .npy atomically (path.tmp, then rename).
void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data);

/// safetensors: every tensor converted to float32 (F32/F64/F16/BF16);
/// `metadata`, when given, receives the __metadata__ strings.
std::map<std::string, HostArray>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata = nullptr);
/// Writes F32 tensors atomically (path.tmp, fsync, rename).
void writeSafetensors(const std::string &path,
                      const std::map<std::string, HostArray> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

/// IDX (MNIST / Fashion-MNIST), optionally gzipped; u8 data as float.
HostArray readIdx(const std::string &path);

/// The bytes of `path`; "<path>: cannot open the <what>" when it cannot.
std::string readFile(const std::string &path, const std::string &what = "file");

/// Atomically replaces `path` with `bytes` (tmp file, fsync, rename).
void writeFileAtomically(const std::string &path, const std::string &bytes);

} // namespace snnrt

#endif // SNNRT_FORMATS_H
