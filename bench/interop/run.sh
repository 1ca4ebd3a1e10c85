#!/usr/bin/env bash
# Regenerates the NIR interop table (bench/results/2026-11-24-nir-interop.md,
# or the file given as $1) in one command: sets up .interop-cache/ (a virtual
# environment with torch, snnTorch, Norse, Sinabs, nir, nirtorch; SpikingJelly's
# source) when it is missing, then runs bench/interop/run.py against the
# tools in build/ (or $SNN_BUILD_DIR). Exit status 1 when a model expected to
# match differs. Nothing in .interop-cache/ is committed (.gitignore).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="$root/.interop-cache"
build="${SNN_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/results/2026-11-24-nir-interop.md}"
py="$cache/venv/bin/python"
mkdir -p "$cache/wheels"
pip_install() { "$cache/venv/bin/pip" install -q --find-links "$cache/wheels" "$@"; }

if [ ! -x "$py" ] || ! "$py" -c "import torch, snntorch, norse, sinabs, nir, nirtorch" 2>/dev/null; then
  python3 -m venv "$cache/venv"
  # PyPI's default Linux torch wheel (it pulls the CUDA wheels; only the CPU
  # is used here).
  pip_install torch numpy h5py packaging tqdm pytest setuptools
  pip_install "snntorch==1.0.0" "nir==1.0.8" "nirtorch==2.6"
  # Norse 1.1.0 is an sdist whose version comes from git metadata.
  "$cache/venv/bin/pip" download -q --no-deps --no-binary :all: -d "$cache/wheels" "norse==1.1.0"
  SETUPTOOLS_SCM_PRETEND_VERSION=1.1.0 pip_install --no-build-isolation --no-deps \
    "$cache"/wheels/norse-1.1.0.tar.gz
  # Sinabs 3.1.3 asks for nir<=1.0.4; the others need nir 1.0.8 / nirtorch
  # 2.6, with which Sinabs' to_nir/from_nir work too: pin those back.
  pip_install "sinabs==3.1.3"
  pip_install --no-deps "nir==1.0.8" "nirtorch==2.6"
fi
if [ ! -d "$cache/spikingjelly/spikingjelly" ]; then
  git clone -q https://github.com/fangwei123456/spikingjelly "$cache/spikingjelly"
  git -C "$cache/spikingjelly" rev-parse HEAD > "$cache/spikingjelly/COMMIT"
fi
exec "$py" "$root/bench/interop/run.py" --build "$build" --out "$out" \
  --json "${out%.md}.json"
