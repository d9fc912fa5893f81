#!/usr/bin/env python3
"""Every function the public headers declare is a symbol of libpgwire.so.

A binding (ctypes, cgo, JNA) finds functions with dlsym, never through a
header: each function the headers declare (PGW_EXTERN) or define inline
(PGW_INLINE) must be exported under its name, and the library exports no
pgw_ function that no header declares. The library is loaded with dlopen,
as ctypes does, and every name is looked up with dlsym. A header may not
define a function a binding cannot find: no `static inline` function, and
every function-like macro (PGW_QUERY, ...) and pgw_ alias expands to a
declared function, but for the X-macro tables and PGW_NUMERIC_STORAGE.

usage: check-exports.py LIBRARY INCLUDE_DIR
       check-exports.py --names INCLUDE_DIR
The second form prints the declared names, one a line, for a program that
finds them itself (tests/integration/test_ffi_dlopen.c).
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


# Function-like macros that build no value a binding needs: X-macro tables
# (a binding copies their values) and a size computation.
MACROS_WITHOUT_FUNCTION = {"PGW_ERRNO_MAP", "PGW_CONN_PHASE_MAP", "PGW_ERROR_FIELD_MAP",
                           "PGW_BUILTIN_TYPES", "PGW_NUMERIC_STORAGE"}
MACRO = re.compile(r"^#\s*define\s+((?!PGW__)\w+)(\([^)]*\))?[ \t]+((?:.*\\\n)*.*)$", re.M)


def unreachable(include_dir, names):
    """Functions defined in a header of include/pgwire that dlsym cannot find."""
    problems = []
    for header in sorted(pathlib.Path(include_dir, "pgwire").glob("*.h")):
        text = header.read_text()
        for m in re.finditer(r"\bstatic\s+inline\b[^;{(]*?\b(\w+)\s*\(", text):
            problems.append(f"static inline: {m.group(1)} ({header.name})")
        for m in MACRO.finditer(text):
            name, params, body = m.group(1), m.group(2), m.group(3)
            alias = not params and name.startswith("pgw_")
            if not (params or alias) or name in MACROS_WITHOUT_FUNCTION:
                continue
            if not any(f in names for f in re.findall(r"\bpgw_\w+", body)):
                problems.append(f"macro without an exported function: {name} ({header.name})")
    return problems


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines()
            if line.split()[-1].startswith("pgw_") and line.split()[-2] in "TW"}


def main():
    if sys.argv[1] == "--names":
        print("\n".join(sorted(declared(sys.argv[2]))))
        return 0
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
    problems = unreachable(include_dir, names)
    for p in problems:
        print(p)
    if len(names) < 400:
        print("too few declarations found: the header scan is broken")
        return 1
    return 1 if missing or undeclared or problems else 0


if __name__ == "__main__":
    sys.exit(main())
