"""blas_core_check.py SNN_RUN MODULE: the OpenBLAS core snn-run reports.

Without OPENBLAS_CORETYPE, on a CPU with AVX the core is not one of
OpenBLAS's generic (pre-AVX) ones; with OPENBLAS_CORETYPE=Prescott the user's
choice is kept. Prints "own core: OK" and "set core kept: OK" (or SKIP when
the BLAS is not OpenBLAS, FAIL with the reason).
"""
import json
import os
import subprocess
import sys

GENERIC = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
           "katmai", "coppermine", "northwood", "banias", "unknown"}


def reported_core(run, module, env):
    out = subprocess.run([run, module, "bench", "--device", "cpu",
                          "--iterations", "1", "--threads", "1"],
                         env=env, capture_output=True, text=True, check=True)
    device = json.loads(out.stdout.strip().splitlines()[-1])["device"]
    for part in device.split(", "):
        if part.startswith("OpenBLAS "):
            return part[len("OpenBLAS "):], out.stderr
    return None, out.stderr


def main():
    run, module = sys.argv[1], sys.argv[2]
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    core, err = reported_core(run, module, env)
    if core is None:
        print("own core: SKIP (not OpenBLAS)\nset core kept: SKIP")
        return
    if "avx" in flags and core.lower() in GENERIC:
        print(f"own core: FAIL: OpenBLAS runs {core} on a CPU with AVX")
    elif "warning" in err:
        print(f"own core: FAIL: a warning after the restart: {err.strip()}")
    else:
        print("own core: OK")
    env["OPENBLAS_CORETYPE"] = "Prescott"
    core, err = reported_core(run, module, env)
    print("set core kept: " + ("OK" if core == "Prescott"
                                else f"FAIL: {core} instead of Prescott"))


if __name__ == "__main__":
    main()
