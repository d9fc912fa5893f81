#!/usr/bin/env python3
"""Every symbol libpq.so.5 exports, libpgwire-pq's libpq.so.5 exports too.

A program linked with libpq finds its functions (and pgresStatus, a data
object) by name when the loader is pointed at libpgwire-pq's libpq.so.5: a
name libpq exports and ours does not is a program that fails to start.
The names ours may lack are listed in ALLOWED, one per line with the reason
("name  reason"); a name listed there that ours does export is an error too,
so the list stays short and true.

usage: check-exports.py LIBPQ_SO OUR_LIBPQ_SO ALLOWED
"""
import subprocess
import sys


def exported(library):
    out = subprocess.run(["objdump", "-T", library], check=True, capture_output=True,
                         text=True).stdout
    names = {}
    for line in out.splitlines():
        fields = line.split()
        # "ADDR l/g  DF .text  SIZE  VERSION  NAME": defined functions and objects.
        if len(fields) >= 6 and fields[-4] != "*UND*" and fields[-5] in ("DF", "DO"):
            names[fields[-1]] = fields[-5]
    return names


def allowed_missing(path):
    allowed = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            if not reason.strip():
                sys.exit(f"{path}: {name} has no reason")
            allowed[name] = reason.strip()
    return allowed


def main():
    ref, ours_so, allowed_path = sys.argv[1:4]
    theirs, ours = exported(ref), exported(ours_so)
    allowed = allowed_missing(allowed_path)
    missing = sorted(n for n in theirs if n not in ours)
    unexplained = [n for n in missing if n not in allowed]
    stale = sorted(n for n in allowed if n in ours or n not in theirs)
    for n in missing:
        print(f"missing: {n}" + (f" (allowed: {allowed[n]})" if n in allowed else ""))
    for n in sorted(n for n in theirs if n in ours and theirs[n] != ours[n]):
        print(f"kind differs: {n} is {theirs[n]} in libpq, {ours[n]} in ours")
        unexplained.append(n)
    for n in stale:
        print(f"{allowed_path}: {n} is exported by ours or not by libpq: remove it")
    extra = sorted(n for n in ours if n not in theirs)
    if extra:
        print("exported beyond libpq 15: " + " ".join(extra))
    print(f"{len(theirs)} symbols exported by libpq, {len(theirs) - len(missing)} by ours, "
          f"{len(missing)} missing ({len(unexplained)} not allowed)")
    if len(theirs) < 150:
        print("too few symbols found in libpq: the objdump parse is broken")
        return 1
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main())
