//===- KernelModules.cpp - the built-in and the compiled kernels ----------===//

#include "KernelModules.h"

#include "CudaDriver.h"
#include "CudaError.h"

#include <cstddef>
#include <fstream>
#include <sstream>

namespace snnrt::cuda {
struct EmbeddedFile {
  const char *name;
  const unsigned char *data;
  std::size_t size;
};
extern const EmbeddedFile kEmbeddedKernels[];
extern const std::size_t kNumEmbeddedKernels;
} // namespace snnrt::cuda

using namespace snnrt::cuda;

KernelModules::~KernelModules() {
  for (CUmodule m : builtinModules)
    driver().cuModuleUnload(m);
  if (compiled)
    driver().cuModuleUnload(compiled);
}

void KernelModules::loadBuiltin(const std::string &where) {
  for (std::size_t i = 0; i < kNumEmbeddedKernels; ++i) {
    CUmodule module = nullptr;
    CUresult r = driver().cuModuleLoadData(&module, kEmbeddedKernels[i].data);
    // Optional: without it, captured programs run dense GEMMs always.
    if (r != CUDA_SUCCESS &&
        std::string(kEmbeddedKernels[i].name) == "GraphCondition")
      continue;
    if (r != CUDA_SUCCESS)
      throwError(where + ": cannot load the built-in kernels " +
                 kEmbeddedKernels[i].name +
                 ".cu: cuModuleLoadData failed: " + describe(r) +
                 (r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
                          r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                      ? " (the library has sm_80/sm_90 code and compute_90 "
                        "PTX: a newer driver or a GPU of compute capability "
                        ">= 8.0 is needed)"
                      : ""));
    builtinModules.push_back(module);
  }
}

CUfunction KernelModules::findBuiltin(const std::string &name) {
  auto it = builtinCache.find(name);
  if (it != builtinCache.end())
    return it->second;
  for (CUmodule m : builtinModules) {
    CUfunction fn = nullptr;
    if (driver().cuModuleGetFunction(&fn, m, name.c_str()) == CUDA_SUCCESS) {
      builtinCache.emplace(name, fn);
      return fn;
    }
  }
  return nullptr;
}

CUfunction KernelModules::builtin(const std::string &name,
                                  const std::string &where) {
  if (CUfunction fn = findBuiltin(name))
    return fn;
  throwError(where + ": the built-in kernel " + name +
             " is missing from libsnnrt (a build error: rebuild snnrt_cuda)");
}

static bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

std::string
KernelModules::loadCompiled(const std::string &moduleDir,
                            const std::map<std::string, std::string> &files,
                            int major, int minor, const std::string &where) {
  if (compiled)
    return compiledFile;
  // A cubin runs on its own major version at an equal or higher minor one.
  std::string file;
  for (int m = minor; m >= 0 && file.empty(); --m) {
    auto it = files.find("sm_" + std::to_string(major) + std::to_string(m));
    if (it != files.end())
      file = it->second;
  }
  bool isPtx = false;
  if (file.empty()) {
    auto it = files.find("ptx");
    if (it == files.end())
      return "";
    file = it->second;
    isPtx = true;
  }
  std::string path = moduleDir + "/" + file, image;
  if (!readFile(path, image))
    throwError(where + ": cannot read " + path +
               " (named by the manifest's \"kernels\"): recompile the "
               "module with snn-opt --snn-compile");
  if (isPtx)
    image.push_back('\0'); // cuModuleLoadData reads PTX as a C string
  CUresult r = driver().cuModuleLoadData(&compiled, image.data());
  if (r != CUDA_SUCCESS) {
    compiled = nullptr;
    throwError(where + ": cannot load " + path +
               ": cuModuleLoadData failed: " + describe(r) +
               "; recompile the module for this GPU (sm_" +
               std::to_string(major) + std::to_string(minor) + ")");
  }
  compiledFile = path;
  return path;
}

CUfunction KernelModules::compiledKernel(const std::string &name,
                                         const std::string &where) {
  auto it = compiledCache.find(name);
  if (it != compiledCache.end())
    return it->second;
  CUfunction fn = nullptr;
  CUresult r = compiled ? driver().cuModuleGetFunction(&fn, compiled,
                                                       name.c_str())
                        : CUDA_ERROR_NOT_FOUND;
  if (r != CUDA_SUCCESS)
    throwError(where + ": kernel " + name + " not found in " +
               (compiled ? compiledFile : std::string("the module (no "
                                                      "cubin/PTX loaded)")) +
               ": " + describe(r) + "; recompile the module");
  compiledCache.emplace(name, fn);
  return fn;
}
