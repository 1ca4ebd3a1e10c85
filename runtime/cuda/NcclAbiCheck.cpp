//===- NcclAbiCheck.cpp - NcclApi.h against the real nccl.h ---------------===//
//
// Built only where nccl.h is found: the values NcclApi.h mirrors must be
// NCCL's, or the build stops here rather than a collective going wrong.
//
//===----------------------------------------------------------------------===//

#include "NcclApi.h"

#include <nccl.h>

namespace n = snnrt::nccl;
static_assert(sizeof(n::UniqueId) == sizeof(ncclUniqueId), "ncclUniqueId size");
static_assert(int(n::Float32) == int(ncclFloat32), "ncclFloat32");
static_assert(int(n::Uint8) == int(ncclUint8), "ncclUint8");
static_assert(int(n::Sum) == int(ncclSum), "ncclSum");
static_assert(int(n::Avg) == int(ncclAvg), "ncclAvg");
static_assert(int(n::Success) == int(ncclSuccess), "ncclSuccess");
static_assert(int(n::InProgress) == int(ncclInProgress), "ncclInProgress");
static_assert(int(n::RemoteError) == int(ncclRemoteError), "ncclRemoteError");
