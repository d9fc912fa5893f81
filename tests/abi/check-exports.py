#!/usr/bin/env python3
"""Every function the public headers declare is a symbol of libpgwire.so.

A binding (ctypes, cgo, JNA) finds functions with dlsym, never through a
header: each function the headers declare (PGW_EXTERN) or define inline
(PGW_INLINE) must be exported under its name, and the library exports no
pgw_ function that no header declares. The library is loaded with dlopen,
as ctypes does, and every name is looked up with dlsym.

usage: check-exports.py LIBRARY INCLUDE_DIR
"""
import ctypes
import pathlib
import re
import subprocess
import sys

DECL = re.compile(r"\b(PGW_EXTERN|PGW_INLINE)\b[^;{(]*?\b(pgw_\w+)\s*\(")


def declared(include_dir):
    names = {}
    for header in sorted(pathlib.Path(include_dir).rglob("*.h")):
        text = header.read_text()
        # Not the macro definitions themselves (common.h).
        text = re.sub(r"#\s*define\s+PGW_(EXTERN|INLINE)\b.*", "", text)
        for m in DECL.finditer(text):
            names.setdefault(m.group(2), header.name)
    return names


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines()
            if line.split()[-1].startswith("pgw_") and line.split()[-2] in "TW"}


def main():
    library, include_dir = sys.argv[1], sys.argv[2]
    names = declared(include_dir)
    lib = ctypes.CDLL(library)
    missing = [n for n in sorted(names) if not hasattr(lib, n)]
    undeclared = sorted(exported(library) - names.keys())
    print(f"{len(names)} functions declared by the headers, "
          f"{len(names) - len(missing)} found with dlsym")
    for n in missing:
        print(f"missing: {n} ({names[n]})")
    for n in undeclared:
        print(f"exported but declared by no header: {n}")
    if len(names) < 400:
        print("too few declarations found: the header scan is broken")
        return 1
    return 1 if missing or undeclared else 0


if __name__ == "__main__":
    sys.exit(main())
