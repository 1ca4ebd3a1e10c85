# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SNN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.snn_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "fuzz"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%snn_src_root", config.snn_src_root))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not`, `count` and FileCheck live in LLVM's tool dir, which is not on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.snn_tools_dir, config.snn_runtime_tools_dir,
             config.llvm_tools_dir]
tools = ["snn-opt"]
for optional in ["snn-translate", "snn-run"]:
    if any(os.path.exists(os.path.join(d, optional)) for d in tool_dirs):
        tools.append(optional)
        config.available_features.add(optional)
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The project's Python packages (the float64 reference) are importable in tests.
config.environment["PYTHONPATH"] = os.path.join(config.snn_src_root, "python")
# Planned (shared) tensor storage starts as NaN: a read before a write shows.
config.environment["SNNRT_MEMORY_PLAN"] = "poison"

# GPU tests: `REQUIRES: cuda-gpu` runs only where a driver answers.
if config.snn_cuda_enabled:
    config.available_features.add("cuda")
    if shutil.which("nvidia-smi"):
        try:
            if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              timeout=20).returncode == 0:
                config.available_features.add("cuda-gpu")
        except (OSError, subprocess.SubprocessError):
            pass
# Multi-process tests: `REQUIRES: mpi` where snn-run has the MPI backend and
# mpirun exists. `%mpirun` may oversubscribe the cores and run as root (CI).
if config.snn_mpi_enabled and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --oversubscribe --allow-run-as-root --bind-to none"))
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
# Python features are those of the `python3` that `%python` runs, which need
# not be the interpreter running lit.
def _python_has(modules):
    try:
        return subprocess.run(
            [shutil.which("python3") or "python3", "-c", "import " + modules],
            capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False

if _python_has("h5py, numpy"):
    config.available_features.add("python-h5py")
if _python_has("numpy"):
    config.available_features.add("python-numpy")
