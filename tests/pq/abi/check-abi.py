#!/usr/bin/env python3
"""libpgwire-pq's headers are ABI-identical to libpq's.

Reads libpq's libpq-fe.h, libpq-events.h, postgres_ext.h and pqexpbuffer.h (the reference,
e.g. Debian's libpq-dev 15) and generates from them:

  - a dump program printing every enum constant's value, every enum type's
    size, every object-like macro's value, and sizeof, alignment and
    offsetof of every member of every public struct; it is compiled once
    against libpq's headers and once against ours, both are run and every
    line of libpq's output must be printed identically by ours (ours may
    print more: the additions of later libpq versions);
  - a TU that includes our headers and then re-declares every prototype and
    typedef of libpq's headers: any conflicting type is a compile error.

usage: check-abi.py CC LIBPQ_INCLUDE_DIR OUR_INCLUDE_DIR WORK_DIR
"""
import pathlib
import re
import subprocess
import sys

HEADERS = ["postgres_ext.h", "libpq-fe.h", "libpq-events.h", "pqexpbuffer.h"]
# libpq's pqexpbuffer.h lives among its internal headers.
SEARCH = ["", "internal"]
# What libpq's headers need from its c.h.
PRELUDE = ("#include <limits.h>\n#include <stddef.h>\n#include <stdio.h>\n"
           "#include <stdlib.h>\n#ifndef pg_attribute_printf\n"
           "#define pg_attribute_printf(f, a) __attribute__((format(printf, f, a)))\n"
           "#endif\n")


def find_header(include_dir, name):
    for sub in SEARCH:
        p = pathlib.Path(include_dir) / sub / name
        if p.exists():
            return p
    sys.exit(f"{name} not found under {include_dir}")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def parse(text):
    """Enums, structs, object-like and function-like macros, declarations."""
    text = strip_comments(text)
    macros, fmacros = [], []
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)(\(?)([^\n]*)$", text, flags=re.M):
        name, paren, value = m.group(1), m.group(2), m.group(3).strip()
        if paren:
            fmacros.append(name)
        elif value and not name.endswith("_H"):
            macros.append(name)
    body = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
    body = re.sub(r'extern\s+"C"\s*\{', " ", body)
    enums = []
    for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", body, flags=re.S):
        consts = [c.split("=")[0].strip() for c in m.group(1).split(",") if c.strip()]
        enums.append((m.group(2), consts))
    structs = []
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{((?:[^{}]|\{[^{}]*\})*)\}\s*(\w+)\s*;",
                         body, flags=re.S):
        members = []
        inner = m.group(1)
        for u in re.finditer(r"union\s*\{([^}]*)\}\s*(\w+)\s*;", inner):
            members.append(u.group(2))
            for f in u.group(1).split(";"):
                if f.strip():
                    members.append(u.group(2) + "." + re.findall(r"\w+", f)[-1])
        inner = re.sub(r"union\s*\{[^}]*\}\s*\w+\s*;", " ", inner)
        for f in inner.split(";"):
            if f.strip():
                members.append(re.findall(r"\w+", f)[-1])
        structs.append((m.group(2), members))
    # Declarations that may be repeated: prototypes and typedefs without a
    # body (a second enum or struct body would define a new type).
    decls = []
    flat = re.sub(r"typedef\s+(enum|struct)\s*\w*\s*\{(?:[^{}]|\{[^{}]*\})*\}\s*\w+\s*;",
                  " ", body, flags=re.S)
    for stmt in flat.split(";"):
        stmt = " ".join(stmt.split()).strip("} ")
        if stmt.startswith("extern") or stmt.startswith("typedef"):
            decls.append(stmt + ";")
    return enums, structs, macros, fmacros, decls


def dump_program(includes, enums, structs, macros, fmacros):
    out = [PRELUDE]
    out += [f'#include "{h}"' for h in includes]
    out.append("""
static void pq_abi_str(const char *name, const char *v) { printf("macro %s = \\"%s\\"\\n", name, v); }
static void pq_abi_int(const char *name, long long v) { printf("macro %s = %lld\\n", name, v); }
#define PQ_ABI_MACRO(m) _Generic((m), char *: pq_abi_str, const char *: pq_abi_str, \\
                                 default: pq_abi_int)(#m, (m))
int main(void)
{""")
    for name, consts in enums:
        out.append(f'    printf("enum {name} size %zu\\n", sizeof({name}));')
        for c in consts:
            out.append(f'    printf("enum {name}.{c} = %lld\\n", (long long){c});')
    for name, members in structs:
        out.append(f'    printf("struct {name} size %zu align %zu\\n", sizeof({name}), '
                   f'_Alignof({name}));')
        for mem in members:
            out.append(f'    printf("struct {name}.{mem} offset %zu size %zu\\n", '
                       f'offsetof({name}, {mem}), sizeof((({name} *)0)->{mem}));')
    for m in macros:
        out.append(f"    PQ_ABI_MACRO({m});")
    for m in fmacros:
        out.append(f'#ifdef {m}\n    printf("function-like macro {m}\\n");\n#endif')
    out.append("    return 0;\n}\n")
    return "\n".join(out)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(" ".join(str(c) for c in cmd))
        print(r.stdout + r.stderr)
        sys.exit(1)
    return r.stdout


def main():
    cc, ref_dir, our_dir, work = sys.argv[1:5]
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    enums, structs, macros, fmacros, decls = [], [], [], [], []
    ref_includes = []
    for h in HEADERS:
        path = find_header(ref_dir, h)
        ref_includes.append(str(path.relative_to(ref_dir)))
        e, s, m, f, d = parse(path.read_text())
        enums += e
        structs += s
        macros += m
        fmacros += f
        decls += d
    macros = [m for m in macros if m != "PG_INT64_TYPE"]  # spelled as a type, not a value
    if len(enums) < 8 or len(structs) < 6 or len(decls) < 180:
        print(f"too little found in libpq's headers ({len(enums)} enums, {len(structs)} "
              f"structs, {len(decls)} declarations): the parser is broken")
        return 1

    outputs = {}
    for side, inc_dir, includes in (("libpq", ref_dir, ref_includes), ("ours", our_dir, HEADERS)):
        src = work / f"abi_dump_{side}.c"
        src.write_text(dump_program(includes, enums, structs, macros, fmacros))
        exe = work / f"abi_dump_{side}"
        run([cc, "-std=c11", "-Wall", "-I", inc_dir, "-o", str(exe), str(src)])
        outputs[side] = run([str(exe)]).splitlines()

    redecl = work / "abi_redeclare.c"
    redecl.write_text(PRELUDE + "".join(f'#include "{h}"\n' for h in HEADERS) +
                      "\n/* libpq's own declarations, repeated */\n" + "\n".join(decls) + "\n")
    run([cc, "-std=c11", "-pedantic-errors", "-Wall", "-Werror", "-I", our_dir, "-c",
         "-o", str(work / "abi_redeclare.o"), str(redecl)])

    ours = set(outputs["ours"])
    differ = [line for line in outputs["libpq"] if line not in ours]
    ours_by_key = {line.split(" = ")[0].split(" offset ")[0]: line for line in outputs["ours"]}
    for line in differ:
        key = line.split(" = ")[0].split(" offset ")[0]
        print(f"libpq: {line}\n ours: {ours_by_key.get(key, '(missing)')}")
    print(f"{len(outputs['libpq'])} enum values, sizes, offsets and macros compared, "
          f"{len(differ)} differ; {len(decls)} declarations repeated without conflict")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
