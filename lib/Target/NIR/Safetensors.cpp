//===- Safetensors.cpp - reading safetensors checkpoints ------------------===//

#include "Safetensors.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"

#include <cstring>

using namespace mlir::snn;
using llvm::StringRef;

static llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(msg);
}

/// IEEE half and bfloat16 to float.
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           man = h & 0x3ff, bits;
  if (exp == 0x1f)
    bits = sign | 0x7f800000 | (man << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (man == 0)
    bits = sign;
  else { // subnormal: normalize
    exp = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

llvm::Expected<llvm::StringMap<SafetensorsTensor>>
mlir::snn::readSafetensors(StringRef image) {
  if (image.size() < 8)
    return fail("not a safetensors file: shorter than its 8-byte header size");
  uint64_t headerSize =
      llvm::support::endian::read64le(image.data());
  if (headerSize > image.size() - 8 || headerSize > (uint64_t(1) << 30))
    return fail("not a safetensors file or truncated: header size " +
                llvm::Twine(headerSize) + " exceeds the file");
  StringRef header = image.substr(8, headerSize);
  StringRef data = image.substr(8 + headerSize);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return fail("safetensors header is not valid JSON: " +
                llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("safetensors header is not a JSON object");
  llvm::StringMap<SafetensorsTensor> out;
  for (const auto &[key, value] : *root) {
    StringRef name = key;
    if (name == "__metadata__")
      continue;
    const llvm::json::Object *t = value.getAsObject();
    auto dtype = t ? t->getString("dtype") : std::nullopt;
    const llvm::json::Array *shape = t ? t->getArray("shape") : nullptr;
    const llvm::json::Array *offsets = t ? t->getArray("data_offsets") : nullptr;
    if (!dtype || !shape || !offsets || offsets->size() != 2)
      return fail("safetensors tensor '" + name +
                  "' needs dtype, shape and data_offsets");
    SafetensorsTensor tensor;
    uint64_t count = 1;
    for (const llvm::json::Value &d : *shape) {
      auto v = d.getAsInteger();
      if (!v || *v < 0 || *v > (int64_t(1) << 40))
        return fail("safetensors tensor '" + name + "' has an invalid shape");
      tensor.shape.push_back(*v);
      count *= uint64_t(*v);
      if (count > (uint64_t(1) << 34))
        return fail("safetensors tensor '" + name + "' is too large");
    }
    size_t width = *dtype == "F64" ? 8 : *dtype == "F32" ? 4
                   : (*dtype == "F16" || *dtype == "BF16") ? 2 : 0;
    if (!width)
      return fail("safetensors tensor '" + name + "' has dtype " + *dtype +
                  "; parameters must be F32, F64, F16 or BF16");
    auto begin = (*offsets)[0].getAsInteger(), end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        uint64_t(*end) > data.size() ||
        uint64_t(*end - *begin) != count * width)
      return fail("safetensors tensor '" + name +
                  "' has data_offsets outside the file or not matching its "
                  "shape (truncated file?)");
    const char *p = data.data() + *begin;
    tensor.values.resize(count);
    for (uint64_t i = 0; i < count; ++i, p += width) {
      if (*dtype == "F32") {
        uint32_t bits = llvm::support::endian::read32le(p);
        std::memcpy(&tensor.values[i], &bits, 4);
      } else if (*dtype == "F64") {
        uint64_t bits = llvm::support::endian::read64le(p);
        double d;
        std::memcpy(&d, &bits, 8);
        tensor.values[i] = float(d);
      } else if (*dtype == "F16") {
        tensor.values[i] = halfToFloat(llvm::support::endian::read16le(p));
      } else {
        uint32_t bits = uint32_t(llvm::support::endian::read16le(p)) << 16;
        std::memcpy(&tensor.values[i], &bits, 4);
      }
    }
    out[name] = std::move(tensor);
  }
  return out;
}
