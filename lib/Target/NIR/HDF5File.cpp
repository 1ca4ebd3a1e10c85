//===- HDF5File.cpp - minimal HDF5 reading and writing for NIR ------------===//
//
// libhdf5 (Debian libhdf5-dev) is the project's HDF5 library. Everything goes
// through in-memory file images (the "core" driver), so no temporary files are
// needed and a failed export never leaves a partial file behind.
//
//===----------------------------------------------------------------------===//

#include "HDF5File.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>

using namespace mlir::snn::nir;
using llvm::createStringError;
using llvm::Expected;
using llvm::StringRef;

namespace {
/// Closes an HDF5 handle with the matching close function.
class Handle {
public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id(id), close(close) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() {
    if (id >= 0)
      close(id);
  }
  bool valid() const { return id >= 0; }
  operator hid_t() const { return id; }

private:
  hid_t id;
  Closer close;
};

// Deeper nesting than this is no NIR graph; the limit keeps malformed files
// from exhausting the stack.
constexpr int kMaxDepth = 64;
// Largest element count read from one dataset (2^31 doubles = 16 GiB).
constexpr uint64_t kMaxElements = uint64_t(1) << 31;

void silenceHDF5() {
  // HDF5 prints its error stack to stderr by default; errors are reported
  // through llvm::Error instead.
  static bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

llvm::Error err(const llvm::Twine &msg) {
  return createStringError(msg);
}
} // namespace

const H5Entry *H5Entry::find(StringRef child) const {
  for (const H5Entry &c : children)
    if (c.name == child)
      return &c;
  return nullptr;
}

static std::string trimPadding(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  while (len > 0 && s[len - 1] == ' ')
    --len;
  return std::string(s, len);
}

static llvm::Error readDataset(hid_t dset, const std::string &path,
                               H5Data &out) {
  Handle space(H5Dget_space(dset), H5Sclose);
  Handle ftype(H5Dget_type(dset), H5Tclose);
  if (!space.valid() || !ftype.valid())
    return err("cannot read dataset '" + path + "' (damaged file?)");
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0 || rank > 32)
    return err("dataset '" + path + "' has an unreadable shape");
  hsize_t dims[32];
  H5Sget_simple_extent_dims(space, dims, nullptr);
  uint64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    out.shape.push_back(int64_t(dims[i]));
    count *= dims[i];
    if (count > kMaxElements)
      return err("dataset '" + path + "' is too large");
  }
  H5T_class_t cls = H5Tget_class(ftype);
  if (count == 0) {
    out.isString = cls == H5T_STRING;
    out.isInteger = cls == H5T_INTEGER;
    return llvm::Error::success();
  }
  if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
    out.isInteger = cls == H5T_INTEGER;
    out.numbers.resize(count);
    if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                out.numbers.data()) < 0)
      return err("cannot read dataset '" + path + "' (truncated file?)");
    return llvm::Error::success();
  }
  if (cls != H5T_STRING) {
    // Not used by NIR (e.g. h5py booleans): kept empty, rejected where needed.
    out.shape.clear();
    return llvm::Error::success();
  }
  out.isString = true;
  if (H5Tis_variable_str(ftype) > 0) {
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype, H5T_VARIABLE);
    H5Tset_cset(mtype, H5Tget_cset(ftype));
    std::vector<char *> buf(count, nullptr);
    if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
      return err("cannot read string dataset '" + path + "'");
    for (char *s : buf)
      out.strings.push_back(s ? trimPadding(s, strlen(s)) : std::string());
    H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf.data());
    return llvm::Error::success();
  }
  size_t size = H5Tget_size(ftype);
  if (size == 0 || size > (1u << 20))
    return err("string dataset '" + path + "' has an invalid length");
  Handle mtype(H5Tcopy(ftype), H5Tclose);
  std::vector<char> buf(count * size);
  if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
    return err("cannot read string dataset '" + path + "'");
  for (uint64_t i = 0; i < count; ++i)
    out.strings.push_back(trimPadding(buf.data() + i * size, size));
  return llvm::Error::success();
}

static llvm::Error readGroup(hid_t group, const std::string &path, int depth,
                             H5Entry &out) {
  if (depth > kMaxDepth)
    return err("groups nested deeper than " + llvm::Twine(kMaxDepth) +
               " levels at '" + path + "'");
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0)
    return err("cannot list group '" + path + "' (damaged file?)");
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                     nullptr, 0, H5P_DEFAULT);
    if (len < 0)
      return err("cannot list group '" + path + "' (damaged file?)");
    std::string name(size_t(len) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                       name.size(), H5P_DEFAULT);
    name.resize(size_t(len));
    std::string childPath = path == "/" ? "/" + name : path + "/" + name;
    Handle obj(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid())
      return err("cannot open '" + childPath + "' (damaged file?)");
    H5Entry child;
    child.name = name;
    H5I_type_t kind = H5Iget_type(obj);
    if (kind == H5I_GROUP) {
      child.isGroup = true;
      if (auto e = readGroup(obj, childPath, depth + 1, child))
        return e;
    } else if (kind == H5I_DATASET) {
      if (auto e = readDataset(obj, childPath, child.data))
        return e;
    } else {
      continue; // named datatypes: not part of NIR
    }
    out.children.push_back(std::move(child));
  }
  return llvm::Error::success();
}

Expected<H5Entry> mlir::snn::nir::readHDF5Image(StringRef image) {
  silenceHDF5();
  // The signature sits at 0, 512, 1024, ... (after an optional user block).
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  bool signed_ = false;
  for (size_t off = 0; off + 8 <= image.size() && !signed_;
       off = off ? off * 2 : 512)
    signed_ = std::memcmp(image.data() + off, kSignature, 8) == 0;
  if (!signed_)
    return err("not an HDF5 file (no HDF5 signature); NIR files are written "
               "by nir.write()");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl, const_cast<char *>(image.data()),
                        image.size()) < 0)
    return err("cannot set up the HDF5 reader");
  Handle file(H5Fopen("nir-image", H5F_ACC_RDONLY, fapl), H5Fclose);
  if (!file.valid())
    return err("cannot open the HDF5 file: it is truncated or damaged");
  Handle root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  if (!root.valid())
    return err("cannot open the HDF5 root group: the file is damaged");
  H5Entry tree;
  tree.name = "/";
  tree.isGroup = true;
  if (auto e = readGroup(root, "/", 0, tree))
    return std::move(e);
  return tree;
}

static llvm::Error writeEntry(hid_t parent, const H5WriteEntry &e) {
  if (e.isGroup) {
    Handle g(H5Gcreate2(parent, e.name.c_str(), H5P_DEFAULT, H5P_DEFAULT,
                        H5P_DEFAULT),
             H5Gclose);
    if (!g.valid())
      return err("cannot create HDF5 group '" + e.name + "'");
    for (const H5WriteEntry &c : e.children)
      if (auto x = writeEntry(g, c))
        return x;
    return llvm::Error::success();
  }
  const H5Data &d = e.data;
  std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(int(dims.size()), dims.data(),
                                               nullptr),
               H5Sclose);
  // Creates the dataset with `fileType` and writes `data` given as `memType`.
  auto write = [&](hid_t fileType, hid_t memType, const void *data) {
    Handle ds(H5Dcreate2(parent, e.name.c_str(), fileType, space, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
    return ds.valid() ? H5Dwrite(ds, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                 data)
                      : herr_t(-1);
  };
  herr_t status;
  if (d.isString) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    std::vector<const char *> ptrs;
    for (const std::string &s : d.strings)
      ptrs.push_back(s.c_str());
    status = write(type, type, ptrs.data());
  } else if (d.isInteger) {
    std::vector<int64_t> v(d.numbers.begin(), d.numbers.end());
    status = write(H5T_STD_I64LE, H5T_NATIVE_INT64, v.data());
  } else if (e.f32) {
    std::vector<float> v(d.numbers.begin(), d.numbers.end());
    status = write(H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, v.data());
  } else {
    status = write(H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d.numbers.data());
  }
  if (status < 0)
    return err("cannot write HDF5 dataset '" + e.name + "'");
  return llvm::Error::success();
}

Expected<std::string>
mlir::snn::nir::writeHDF5Image(const H5WriteEntry &root) {
  silenceHDF5();
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (H5Pset_fapl_core(fapl, 1 << 16, 0) < 0)
    return err("cannot set up the HDF5 writer");
  Handle file(H5Fcreate("nir-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
              H5Fclose);
  if (!file.valid())
    return err("cannot create the in-memory HDF5 file");
  for (const H5WriteEntry &c : root.children)
    if (auto e = writeEntry(file, c))
      return std::move(e);
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
    return err("cannot flush the HDF5 file");
  ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size <= 0)
    return err("cannot read back the HDF5 file image");
  std::string image(size_t(size), '\0');
  if (H5Fget_file_image(file, image.data(), image.size()) != size)
    return err("cannot read back the HDF5 file image");
  return image;
}
