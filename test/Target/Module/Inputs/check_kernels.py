"""Checks that every kernel a manifest names is in its PTX and in its CPU
library (a dynamic symbol), and that the cubins and the library are ELF files;
prints the kernel of every neuron op and every generated op kernel."""
import json
import os
import re
import sys

root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
ptx = open(os.path.join(root, m["kernels"]["ptx"])).read()
entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
for key, name in m["kernels"].items():
    if key in ("ptx", "host_triple", "host_cpu", "host_neurons"):
        continue
    if open(os.path.join(root, name), "rb").read(4) != b"\x7fELF":
        sys.exit(f"{name} is not an ELF file")
host = open(os.path.join(root, m["kernels"]["host"]), "rb").read() \
    if "host" in m["kernels"] else None
for program, ops in m["programs"].items():
    for op in ops:
        kernel = op.get("kernel")
        if kernel is None:
            continue
        if op["op"] == "kernel":
            if kernel not in entries:
                sys.exit(f"{program}: kernel {kernel} is not in the PTX")
            if host is not None and b"\0" + kernel.encode() + b"\0" not in host:
                sys.exit(f"{program}: kernel {kernel} is not in the CPU library")
            print(f"{program}: kernel {kernel} of={','.join(o['op'] for o in op['of'])} "
                  f"block={op['block']} grid={op['grid']}")
            continue
        for role in ("fwd", "bwd"):
            if role in kernel and kernel[role] not in entries:
                sys.exit(f"{program}: kernel {kernel[role]} is not in the PTX")
            if role in kernel and host is not None and \
                    b"\0" + kernel[role].encode() + b"\0" not in host:
                sys.exit(f"{program}: kernel {kernel[role]} is not in the CPU library")
        print(f"{program}: {op['op']} {op['model']} fwd={kernel.get('fwd')} "
              f"block={kernel['block']} grid={kernel['grid']}")
