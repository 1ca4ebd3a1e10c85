#!/usr/bin/env bash
# Installs what snn-mlir needs and is missing: Debian packages (LLVM/MLIR 22,
# build tools, libhdf5, OpenBLAS, the Fashion-MNIST dataset) and the Python
# packages the tests use. Safe to re-run: it installs only what is missing.
set -euo pipefail

debian_packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools   # the compiler (mlir-tblgen is in -tools)
  cmake ninja-build g++ pkg-config
  libhdf5-dev                                 # NIR files are HDF5
  libopenblas-dev                             # CPU GEMMs
  nlohmann-json3-dev                          # manifest parsing in the runtime (no LLVM there)
  zlib1g-dev                                  # gzipped IDX datasets
  libgtest-dev                                # runtime unit tests
  libopenmpi-dev openmpi-bin                  # multi-process training on CPUs (MPI backend, CI)
  dataset-fashion-mnist                       # the example training set
  python3 python3-pip
)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python_packages=(numpy h5py nir pytest)
if ! python3 -c "import numpy, h5py, nir, pytest" 2>/dev/null; then
  echo "install-deps: installing Python packages: ${python_packages[*]}"
  python3 -m pip install -q "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${python_packages[@]}"
fi
