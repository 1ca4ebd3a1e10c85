//===- SafetensorsWriter.cpp - writing safetensors files ------------------===//

#include "SafetensorsWriter.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::snn;

bool SafetensorsWriter::add(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                            std::vector<float> values) {
  if (!index.try_emplace(name, tensors.size()).second)
    return false;
  tensors.push_back({name.str(), llvm::SmallVector<int64_t>(shape),
                     std::move(values)});
  return true;
}

std::string SafetensorsWriter::merge(const SafetensorsWriter &other) {
  for (const Tensor &t : other.tensors) {
    auto it = index.find(t.name);
    if (it == index.end()) {
      add(t.name, t.shape, t.values);
      continue;
    }
    const Tensor &mine = tensors[it->second];
    if (mine.shape != t.shape || mine.values != t.values)
      return t.name;
  }
  return "";
}

std::string SafetensorsWriter::serialize() const {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const Tensor &t : tensors) {
    uint64_t bytes = t.values.size() * sizeof(float);
    header[t.name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", llvm::json::Array(t.shape)},
        {"data_offsets", llvm::json::Array{offset, offset + bytes}}};
    offset += bytes;
  }
  std::string headerText;
  llvm::raw_string_ostream(headerText) << llvm::json::Value(std::move(header));
  // Readers map the data directly; keep it aligned for any element type.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  std::string image;
  image.reserve(8 + headerText.size() + offset);
  char length[8];
  llvm::support::endian::write64le(length, headerText.size());
  image.append(length, 8);
  image += headerText;
  for (const Tensor &t : tensors) {
    for (float v : t.values) {
      char bytes[4];
      llvm::support::endian::write32le(bytes, llvm::bit_cast<uint32_t>(v));
      image.append(bytes, 4);
    }
  }
  return image;
}
