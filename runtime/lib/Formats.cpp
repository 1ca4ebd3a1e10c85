//===- Formats.cpp - .npy, safetensors and IDX files ----------------------===//

#include "snnrt/Formats.h"
#include "snnrt/Error.h"

#include <nlohmann/json.hpp>
#ifdef SNNRT_HAVE_ZLIB
#include <zlib.h>
#endif

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace snnrt {

std::string readFile(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open the " + what);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFileAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(path + ": write failed (" + std::strerror(errno) + ")");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 ||
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw Error(path + ": could not finish writing (" + std::strerror(errno) +
                ")");
  }
}

static size_t product(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

HostArray readNpy(const std::string &path) {
  std::string bytes = readFile(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw Error(path + ": not a .npy file (no \\x93NUMPY magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12)
      throw Error(path + ": truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
                   << (8 * i);
    offset = 12;
  }
  if (offset + headerLen > bytes.size())
    throw Error(path + ": truncated .npy header");
  std::string header = bytes.substr(offset, headerLen);
  auto field = [&](const std::string &key) {
    size_t p = header.find("'" + key + "'");
    if (p == std::string::npos)
      throw Error(path + ": .npy header has no '" + key + "'");
    return header.substr(header.find(':', p) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (field("fortran_order").find("True") <
      field("fortran_order").find(','))
    throw Error(path + ": Fortran-ordered arrays are not supported; save "
                       "with np.ascontiguousarray");
  std::string shapeText = field("shape");
  shapeText = shapeText.substr(shapeText.find('(') + 1);
  shapeText = shapeText.substr(0, shapeText.find(')'));
  HostArray a;
  std::stringstream ss(shapeText);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item.find_first_of("0123456789") != std::string::npos)
      a.shape.push_back(std::stoll(item));
  size_t n = product(a.shape);
  const char *data = bytes.data() + offset + headerLen;
  size_t avail = bytes.size() - offset - headerLen;
  auto need = [&](size_t elem) {
    if (avail < n * elem)
      throw Error(path + ": truncated .npy data (" + std::to_string(avail) +
                  " bytes for " + std::to_string(n) + " elements)");
  };
  a.data.resize(n);
  if (descr == "<f4") {
    need(4);
    std::memcpy(a.data.data(), data, n * 4);
  } else if (descr == "<f8") {
    need(8);
    for (size_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      a.data[i] = static_cast<float>(v);
    }
  } else if (descr == "|u1") {
    need(1);
    for (size_t i = 0; i < n; ++i)
      a.data[i] = static_cast<unsigned char>(data[i]);
  } else if (descr == "<i4") {
    need(4);
    for (size_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      a.data[i] = static_cast<float>(v);
    }
  } else if (descr == "<i8") {
    need(8);
    for (size_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      a.data[i] = static_cast<float>(v);
    }
  } else {
    throw Error(path + ": unsupported .npy dtype '" + descr +
                "' (use float32, float64, uint8, int32 or int64)");
  }
  return a;
}

void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data) {
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ",";
  if (shape.size() > 1)
    dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char *>(data), product(shape) * 4);
  writeFileAtomically(path, out);
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

static float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400));
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::map<std::string, HostArray>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata) {
  std::string bytes = readFile(path);
  if (bytes.size() < 8)
    throw Error(path + ": truncated safetensors file (no header length)");
  uint64_t headerLen = 0;
  for (int i = 0; i < 8; ++i)
    headerLen |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i]))
                 << (8 * i);
  if (headerLen > bytes.size() - 8)
    throw Error(path + ": truncated safetensors file (header of " +
                std::to_string(headerLen) + " bytes, file of " +
                std::to_string(bytes.size()) + ")");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, headerLen));
  } catch (const nlohmann::json::exception &e) {
    throw Error(path + ": safetensors header is not valid JSON: " + e.what());
  }
  const char *base = bytes.data() + 8 + headerLen;
  size_t dataSize = bytes.size() - 8 - headerLen;
  std::map<std::string, HostArray> result;
  for (auto &[name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!metadata)
        continue;
      if (!info.is_object())
        throw Error(path + ": __metadata__ must be an object of strings");
      for (auto &[key, value] : info.items()) {
        if (!value.is_string())
          throw Error(path + ": __metadata__ entry '" + key +
                      "' is not a string");
        (*metadata)[key] = value.get<std::string>();
      }
      continue;
    }
    HostArray a;
    std::string dtype;
    size_t begin, end;
    try {
      dtype = info.at("dtype").get<std::string>();
      a.shape = info.at("shape").get<std::vector<int64_t>>();
      begin = info.at("data_offsets").at(0).get<size_t>();
      end = info.at("data_offsets").at(1).get<size_t>();
    } catch (const nlohmann::json::exception &e) {
      throw Error(path + ": tensor '" + name + "': malformed entry: " +
                  e.what());
    }
    size_t n = product(a.shape);
    size_t elem = dtype == "F32" ? 4 : dtype == "F64" ? 8
                  : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
    if (!elem)
      throw Error(path + ": tensor '" + name + "' has dtype " + dtype +
                  "; only F32, F64, F16 and BF16 are supported");
    if (end < begin || end > dataSize || end - begin != n * elem)
      throw Error(path + ": tensor '" + name +
                  "' has data offsets outside the file or of the wrong size "
                  "(truncated or corrupt file)");
    a.data.resize(n);
    const char *p = base + begin;
    for (size_t i = 0; i < n; ++i) {
      if (dtype == "F32") {
        std::memcpy(&a.data[i], p + 4 * i, 4);
      } else if (dtype == "F64") {
        double v;
        std::memcpy(&v, p + 8 * i, 8);
        a.data[i] = static_cast<float>(v);
      } else {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        if (dtype == "F16") {
          a.data[i] = halfToFloat(h);
        } else {
          uint32_t bits = static_cast<uint32_t>(h) << 16;
          std::memcpy(&a.data[i], &bits, 4);
        }
      }
    }
    result.emplace(name, std::move(a));
  }
  return result;
}

void writeSafetensors(const std::string &path,
                      const std::map<std::string, HostArray> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  size_t offset = 0;
  for (auto &[name, a] : tensors) {
    size_t bytes = a.data.size() * 4;
    header[name] = {{"dtype", "F32"},
                    {"shape", a.shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8)
    text += ' ';
  std::string out(8, '\0');
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  out += text;
  for (auto &[name, a] : tensors)
    out.append(reinterpret_cast<const char *>(a.data.data()),
               a.data.size() * 4);
  writeFileAtomically(path, out);
}

//===----------------------------------------------------------------------===//
// IDX
//===----------------------------------------------------------------------===//

HostArray readIdx(const std::string &path) {
#ifdef SNNRT_HAVE_ZLIB
  gzFile f = gzopen(path.c_str(), "rb"); // reads plain files too
  if (!f)
    throw Error(path + ": cannot open the IDX file");
  std::string bytes;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0)
    bytes.append(buf, static_cast<size_t>(n));
  bool failed = n < 0;
  gzclose(f);
  if (failed)
    throw Error(path + ": corrupt gzip stream");
#else
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0)
    throw Error(path + ": this snn-run was built without zlib; gunzip the "
                       "file or rebuild with zlib installed");
  std::string bytes = readFile(path);
#endif
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    throw Error(path + ": not an IDX file (bad magic number)");
  if (static_cast<unsigned char>(bytes[2]) != 0x08)
    throw Error(path + ": only unsigned-byte IDX files are supported");
  int rank = static_cast<unsigned char>(bytes[3]);
  if (bytes.size() < 4 + 4 * static_cast<size_t>(rank))
    throw Error(path + ": truncated IDX header");
  HostArray a;
  for (int i = 0; i < rank; ++i) {
    const unsigned char *p =
        reinterpret_cast<const unsigned char *>(bytes.data()) + 4 + 4 * i;
    a.shape.push_back((int64_t(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) |
                      p[3]);
  }
  size_t count = product(a.shape), offset = 4 + 4 * rank;
  if (bytes.size() - offset < count)
    throw Error(path + ": truncated IDX data (" +
                std::to_string(bytes.size() - offset) + " of " +
                std::to_string(count) + " bytes)");
  a.data.resize(count);
  for (size_t i = 0; i < count; ++i)
    a.data[i] = static_cast<unsigned char>(bytes[offset + i]);
  return a;
}

} // namespace snnrt
