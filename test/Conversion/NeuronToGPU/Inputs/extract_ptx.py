#!/usr/bin/env python3
"""Prints the PTX held by the gpu.binary ops of an MLIR file (stdin or a path)
as plain text, so that FileCheck can match it line by line."""

import re
import sys


def unescape(text):
    # MLIR prints non-printable bytes of string attributes as \XX (hex).
    return re.sub(r"\\([0-9A-Fa-f]{2})|\\\\|\\\"",
                  lambda m: chr(int(m.group(1), 16)) if m.group(1)
                  else m.group(0)[1], text)


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    objects = re.findall(r'#gpu\.object<#nvvm\.target<[^>]*>, '
                         r'(?:properties = \{[^}]*\}, )?assembly = '
                         r'"((?:[^"\\]|\\.)*)"', text)
    if not objects:
        sys.exit("extract_ptx.py: no gpu.object with PTX in the input")
    for obj in objects:
        print(unescape(obj))


if __name__ == "__main__":
    main()
