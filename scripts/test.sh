#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs the lit
# tests (compiler, examples, end to end), the runtime's unit tests (ctest) and
# the float64 reference's own tests. GPU tests skip cleanly without a GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SNN_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

status=0
echo "== lit (check-snn)"
ninja -C "$build" check-snn || status=1
echo "== ctest"
ctest --test-dir "$build" --output-on-failure || status=1
if [ -d "$root/python/tests" ]; then
  echo "== pytest (float64 reference)"
  (cd "$root" && PYTHONPATH="$root/python" python3 -m pytest -q python/tests) || status=1
fi
if [ $status -ne 0 ]; then
  echo "test.sh: FAILED" >&2
else
  echo "test.sh: all tests passed"
fi
exit $status
