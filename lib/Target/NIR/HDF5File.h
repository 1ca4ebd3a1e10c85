//===- HDF5File.h - minimal HDF5 reading and writing for NIR ----*- C++ -*-===//
//
// A small RAII layer over libhdf5's C API covering what NIR files use: nested
// groups, numeric datasets (any integer or float type, scalar or n-d), and
// string datasets (variable or fixed length, scalar or arrays). Files are read
// from and written to memory images, so translations work on any stream.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_TARGET_NIR_HDF5FILE_H
#define SNN_LIB_TARGET_NIR_HDF5FILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::snn::nir {

/// A dataset's contents: numbers (converted to double) or strings.
struct H5Data {
  llvm::SmallVector<int64_t> shape; // empty for a scalar dataset
  bool isString = false;
  bool isInteger = false;
  std::vector<double> numbers;
  std::vector<std::string> strings;
};

/// One member of a group, recursively: a group has children, a dataset data.
struct H5Entry {
  std::string name;
  bool isGroup = false;
  std::vector<H5Entry> children; // sorted by name, as HDF5 indexes them
  H5Data data;

  const H5Entry *find(llvm::StringRef child) const;
};

/// Parses a whole HDF5 file image into a tree. Errors say what is broken.
llvm::Expected<H5Entry> readHDF5Image(llvm::StringRef image);

/// Builds an HDF5 file image from a tree (groups and datasets). Integers are
/// written as int64, strings as variable-length UTF-8 (as h5py does), numbers
/// as float32 when `f32` is set on the data, else float64.
struct H5WriteEntry {
  std::string name;
  bool isGroup = false;
  std::vector<H5WriteEntry> children;
  H5Data data;
  bool f32 = false;
};
llvm::Expected<std::string> writeHDF5Image(const H5WriteEntry &root);

} // namespace mlir::snn::nir

#endif // SNN_LIB_TARGET_NIR_HDF5FILE_H
