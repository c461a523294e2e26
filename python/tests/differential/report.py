"""Prints the agreement of lazulite with MLX per namespace, the differences, and (with
--write) puts the table into docs/differences.md. Run from python/tests with lazulite's
Python:

    ../../.venv/bin/python -m differential.report [--write] [--list STATUS] [--fn NAME]
"""

import argparse
import re
import time
from collections import Counter

from . import harness
from .runner import ROOT


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--write", action="store_true", help="write the table into docs/differences.md")
    p.add_argument("--list", default="differ", help="list cases of this status (differ, gap, allowed, mlx-crash)")
    p.add_argument("--fn", default=None, help="only cases of this function")
    args = p.parse_args()
    start = time.time()
    rows, api = harness.run()
    print(f"{len(rows)} cases in {time.time() - start:.1f} s")
    sel = [r for r in rows if r.status == args.list and (args.fn is None or r.case.fn == args.fn)]
    for r in sel:
        print(f"{r.case.id}: {r.kind}: {' '.join(r.detail.split())}")
    print(Counter((r.case.fn, r.kind) for r in sel).most_common(60))
    for ns in harness.NAMESPACES:
        missing = harness.uncovered(ns, api)
        if missing:
            print(f"{ns}: no case for {missing}")
    t, g = harness.tables(rows, api)
    print(t)
    print(g)
    if args.write:
        path = ROOT / "docs" / "differences.md"
        path.write_text(write_tables(path.read_text(), t, g))
        print(f"wrote {path}")


def write_tables(text, agreement, gaps):
    for name, table in (("agreement table", agreement), ("known gaps table", gaps)):
        text = re.sub(rf"(<!-- {name} -->\n).*?(\n<!-- end {name} -->)",
                      lambda m, t=table: m.group(1) + t + m.group(2), text, flags=re.S)
    return text


if __name__ == "__main__":
    main()
