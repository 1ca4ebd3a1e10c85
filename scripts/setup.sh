#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build, run the main job.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/main-job.sh"
