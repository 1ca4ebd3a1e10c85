#!/usr/bin/env bash
# Configures and builds snn-mlir into build/ (or $SNN_BUILD_DIR). The CUDA parts
# build when the CUDA toolkit is found; everything else works without it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SNN_BUILD_DIR:-$root/build}"

if [ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "$@"
fi
ninja -C "$build"
