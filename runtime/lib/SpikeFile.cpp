//===- SpikeFile.cpp - HDF5 spike files (Spiking Heidelberg Digits) -------===//
//
// /spikes/times (float seconds) and /spikes/units (integers) hold one
// variable-length array per sample, /labels one class per sample. Spikes are
// kept as events and turned into [T, B, channels] counts per batch, so a
// dataset of thousands of samples x 100 steps x 700 channels stays small.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Dataset.h"
#include "snnrt/Error.h"

#include <cmath>

#ifdef SNNRT_HAVE_HDF5
#include <hdf5.h>
#endif

namespace snnrt {

#ifndef SNNRT_HAVE_HDF5
Dataset loadSpikeFile(const std::string &path, size_t, int64_t, double) {
  throw Error(path + ": this snn-run was built without libhdf5, so it cannot "
                     "read HDF5 spike files; install libhdf5-dev and rebuild, "
                     "or convert the spikes to a .npy array [T, N, channels]");
}
#else
namespace {
/// Closes an HDF5 handle when it goes out of scope.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0)
      close(id);
  }
};

/// One variable-length array per sample of dataset `name`, read as `type`.
template <typename T>
std::vector<std::vector<T>> readRagged(hid_t file, const std::string &path,
                                       const char *name, hid_t type) {
  Handle ds{H5Dopen2(file, name, H5P_DEFAULT), H5Dclose};
  if (ds.id < 0)
    throw Error(path + ": no dataset " + name +
                " (a spike file holds /spikes/times, /spikes/units and "
                "/labels, as the Spiking Heidelberg Digits)");
  Handle space{H5Dget_space(ds.id), H5Sclose};
  if (H5Sget_simple_extent_ndims(space.id) != 1)
    throw Error(path + ": " + name + " must be one-dimensional (one array "
                                     "per sample)");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.id, &n, nullptr);
  Handle vlen{H5Tvlen_create(type), H5Tclose};
  std::vector<hvl_t> raw(n);
  if (H5Dread(ds.id, vlen.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0)
    throw Error(path + ": cannot read " + name +
                " as variable-length arrays of numbers");
  std::vector<std::vector<T>> out(n);
  for (hsize_t i = 0; i < n; ++i) {
    const T *p = static_cast<const T *>(raw[i].p);
    out[i].assign(p, p + raw[i].len);
  }
  H5Dvlen_reclaim(vlen.id, space.id, H5P_DEFAULT, raw.data());
  return out;
}
} // namespace

Dataset loadSpikeFile(const std::string &path, size_t sampleSize,
                      int64_t steps, double duration) {
  if (!(duration > 0))
    throw Error("--spike-duration must be positive, got " +
                std::to_string(duration));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors are ours to report
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw Error(path + ": not an HDF5 file (a spike file holds /spikes/times, "
                       "/spikes/units and /labels)");
  Handle file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0)
    throw Error(path + ": cannot open the HDF5 file");
  auto times = readRagged<double>(file.id, path, "/spikes/times",
                                  H5T_NATIVE_DOUBLE);
  auto units = readRagged<int64_t>(file.id, path, "/spikes/units",
                                   H5T_NATIVE_INT64);
  if (times.size() != units.size())
    throw Error(path + ": /spikes/times has " + std::to_string(times.size()) +
                " samples but /spikes/units " + std::to_string(units.size()));

  Dataset d;
  d.source = path;
  d.sampleSize = sampleSize;
  d.count = static_cast<int64_t>(times.size());
  d.events.resize(times.size());
  for (size_t n = 0; n < times.size(); ++n) {
    if (times[n].size() != units[n].size())
      throw Error(path + ": sample " + std::to_string(n) + " has " +
                  std::to_string(times[n].size()) + " spike times but " +
                  std::to_string(units[n].size()) + " units");
    for (size_t k = 0; k < times[n].size(); ++k) {
      int64_t unit = units[n][k];
      if (unit < 0 || static_cast<size_t>(unit) >= sampleSize)
        throw Error(path + ": sample " + std::to_string(n) + " has a spike of "
                    "unit " + std::to_string(unit) + " but the model's input "
                    "takes " + std::to_string(sampleSize) + " channels");
      double bin = std::floor(times[n][k] / duration * double(steps));
      if (!(bin >= 0) || bin >= double(steps))
        continue; // before 0 or after the duration
      d.events[n].push_back(static_cast<uint32_t>(int64_t(bin) * sampleSize +
                                                  unit));
    }
  }

  Handle ds{H5Dopen2(file.id, "/labels", H5P_DEFAULT), H5Dclose};
  if (ds.id >= 0) {
    std::vector<int64_t> labels(times.size());
    Handle space{H5Dget_space(ds.id), H5Sclose};
    if (H5Sget_simple_extent_npoints(space.id) !=
            static_cast<hssize_t>(labels.size()) ||
        H5Dread(ds.id, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                labels.data()) < 0)
      throw Error(path + ": /labels must hold one class per sample (" +
                  std::to_string(labels.size()) + ")");
    for (int64_t l : labels) {
      if (l < 0 || l > 2147483647)
        throw Error(path + ": label " + std::to_string(l) +
                    " is not a class index");
      d.labels.push_back(static_cast<int32_t>(l));
    }
  }
  return d;
}
#endif

} // namespace snnrt
