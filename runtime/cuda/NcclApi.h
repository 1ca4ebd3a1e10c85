//===- NcclApi.h - the few NCCL functions snnrt uses, via dlopen -*- C++ -*-===//
//
// No NCCL header or library is needed to build: the types below mirror
// nccl.h (NCCL 2.x ABI: the enums' values and the 128-byte unique id), and
// the functions are resolved from libnccl.so.2 at run time.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_NCCLAPI_H
#define SNNRT_CUDA_NCCLAPI_H

#include <cstddef>
#include <string>

namespace snnrt::nccl {

using Comm = struct ncclComm *;
using Stream = void *; // cudaStream_t == CUstream

struct UniqueId {
  char internal[128];
};

enum Result : int {
  Success = 0,
  UnhandledCudaError = 1,
  SystemError = 2,
  InternalError = 3,
  InvalidArgument = 4,
  InvalidUsage = 5,
  RemoteError = 6,
  InProgress = 7,
};

enum DataType : int { Uint8 = 1, Float32 = 7 };
enum RedOp : int { Sum = 0, Avg = 4 };

struct Api {
  Result (*ncclGetVersion)(int *version) = nullptr;
  Result (*ncclGetUniqueId)(UniqueId *id) = nullptr;
  Result (*ncclCommInitRank)(Comm *comm, int nranks, UniqueId id,
                             int rank) = nullptr;
  Result (*ncclCommDestroy)(Comm comm) = nullptr;
  Result (*ncclCommAbort)(Comm comm) = nullptr;
  Result (*ncclCommGetAsyncError)(Comm comm, Result *error) = nullptr;
  const char *(*ncclGetErrorString)(Result result) = nullptr;
  const char *(*ncclGetLastError)(Comm comm) = nullptr;
  Result (*ncclAllReduce)(const void *send, void *recv, size_t count,
                          DataType type, RedOp op, Comm comm,
                          Stream stream) = nullptr;
  Result (*ncclBroadcast)(const void *send, void *recv, size_t count,
                          DataType type, int root, Comm comm,
                          Stream stream) = nullptr;
  Result (*ncclSend)(const void *send, size_t count, DataType type, int peer,
                     Comm comm, Stream stream) = nullptr;
  Result (*ncclRecv)(void *recv, size_t count, DataType type, int peer,
                     Comm comm, Stream stream) = nullptr;
  Result (*ncclGroupStart)() = nullptr;
  Result (*ncclGroupEnd)() = nullptr;
};

/// Loads libnccl.so.2 once; throws snnrt::Error saying what is missing.
const Api &load();

} // namespace snnrt::nccl

#endif // SNNRT_CUDA_NCCLAPI_H
