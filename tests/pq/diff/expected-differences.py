#!/usr/bin/env python3
"""Masks a program's expected differences in the two outputs run-diff.sh compares.

    expected-differences.py LIST LIBPQ_OUT PGWIRE_OUT

LIST (tests/pq/diff/expected-differences/NAME.txt) holds entries separated
by blank lines (a block of "#" lines alone is a comment); each is one or more "# reason" lines, then the exact lines
libpq's run prints ("- " and the line) and the exact lines libpgwire-pq's run
prints in their place ("+ " and the line), at least one of each. Every run
of an entry's "-" lines, consecutive in LIBPQ_OUT, and every run of its "+"
lines in PGWIRE_OUT becomes the same line "[expected difference N: reason]",
in place: the outputs then compare equal only when the entries' lines stand
where each other's do and everything else is byte for byte the same. An
entry found on neither side is stale (its difference is gone): exit 1.
"""
import sys


def parse(path):
    entries, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            if cur is None:
                cur = {"reason": [], "minus": [], "plus": [], "line": n}
                entries.append(cur)
            if line.startswith("#"):
                cur["reason"].append(line[1:].strip())
            elif line.startswith("- ") or line == "-":
                cur["minus"].append(line[2:])
            elif line.startswith("+ ") or line == "+":
                cur["plus"].append(line[2:])
            else:
                sys.exit(f"{path}:{n}: not '# reason', '- line' or '+ line': {line!r}")
    # A block of comments alone (the file's heading) is no entry.
    entries = [e for e in entries if e["minus"] or e["plus"]]
    for e in entries:
        if not e["reason"] or not e["minus"] or not e["plus"]:
            sys.exit(f"{path}:{e['line']}: an entry needs a reason, '-' lines and '+' lines")
    return entries


def mask(lines, block, token):
    out, i, found = [], 0, 0
    while i < len(lines):
        if lines[i : i + len(block)] == block:
            out.append(token)
            i += len(block)
            found += 1
        else:
            out.append(lines[i])
            i += 1
    return out, found


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    entries = parse(sys.argv[1])
    files = {}
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            files[path] = f.read().split("\n")
    status = 0
    for k, e in enumerate(entries, 1):
        token = f"[expected difference {k}: {e['reason'][0]}]"
        files[sys.argv[2]], a = mask(files[sys.argv[2]], e["minus"], token)
        files[sys.argv[3]], b = mask(files[sys.argv[3]], e["plus"], token)
        if not a and not b:
            print(f"{sys.argv[1]}: entry {k} (line {e['line']}) matches neither run: remove it")
            status = 1
    for path, lines in files.items():
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
