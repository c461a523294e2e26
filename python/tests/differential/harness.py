"""Runs every case on both libraries and sorts each into: agree, allowed (allow-list),
gap (known gaps), mlx-crash (MLX killed its process), or differ (a failure)."""

import fnmatch
from dataclasses import dataclass

from . import runner
from .allowed import ALLOWED
from .cases import CASES, NOT_COVERED, SNIPPET_COVERS
from .compare import difference
from .known_gaps import GAPS

NAMESPACES = ["core", "array", "linalg", "fft", "random", "fast", "nn", "optimizers", "utils"]


@dataclass
class Row:
    case: object
    status: str  # agree | allowed | gap | mlx-crash | differ
    kind: str = ""
    detail: str = ""
    entry: object = None


def label(case):
    return case.id.split("/", 1)[1]


def matches(entry, case):
    return entry.fn == case.fn and any(fnmatch.fnmatchcase(label(case), p) for p in entry.labels)


def entry_id(entry):
    return f"{entry.fn}[{'|'.join(entry.labels)}]"


def classify(case, mlx, ours):
    d = difference(case, mlx, ours)
    if d is None:
        # A gap entry's cases are judged by the gap's own test; agreeing is the goal.
        return Row(case, "agree")
    kind, detail = d
    if kind == "mlx-crash":
        # Where MLX reads or writes out of bounds (allowed: lazulite raises), its undefined
        # behaviour kills its process on some runs only; counting those as allowed keeps
        # the tables the same from run to run.
        for entry in ALLOWED:
            if matches(entry, case):
                return Row(case, "allowed", kind, detail, entry)
        return Row(case, "mlx-crash", kind, detail)
    for entry in ALLOWED:
        if matches(entry, case) and kind in entry.kinds:
            return Row(case, "allowed", kind, detail, entry)
    for entry in GAPS:
        if matches(entry, case) and kind in entry.kinds:
            return Row(case, "gap", kind, detail, entry)
    return Row(case, "differ", kind, detail)


def run(cases=CASES):
    mlx = runner.run_mlx(cases)
    ours = runner.run_lazulite(cases)
    rows = [classify(c, mlx["results"][c.id], ours[c.id]) for c in cases]
    return rows, mlx["api"]


def covered_names(ns, cases=CASES):
    """Public names of MLX namespace `ns` that some case calls."""
    prefix = {"core": "", "nn": "nn."}.get(ns, ns + ".")
    out = set()
    for c in cases:
        if ns == "core" and "." not in c.fn:
            out.add(c.fn)
        elif c.fn.startswith(prefix) and ns != "core":
            out.add(c.fn[len(prefix):].split(".")[-1] if ns == "nn" and c.fn.startswith("nn.losses.") else c.fn[len(prefix):])
    return out | set(SNIPPET_COVERS.get(ns, ()))


def uncovered(ns, api):
    return sorted(set(api.get(ns, ())) - covered_names(ns) - set(NOT_COVERED.get(ns, {})))


def table(rows, api):
    """Markdown table of agreement per namespace."""
    lines = ["| namespace | functions covered | cases | agree | allowed | known gaps | MLX crashes | differ | agreement |",
             "|---|---|---|---|---|---|---|---|---|"]
    total = {k: 0 for k in ("cases", "agree", "allowed", "gap", "mlx-crash", "differ")}
    for ns in NAMESPACES:
        sel = [r for r in rows if r.case.ns == ns]
        if not sel:
            continue
        counts = {k: sum(r.status == k for r in sel) for k in ("agree", "allowed", "gap", "mlx-crash", "differ")}
        n = len(sel)
        for k, v in counts.items():
            total[k] += v
        total["cases"] += n
        if ns in api:
            public = len(api[ns])
            cov = public - len(uncovered(ns, api)) - len(NOT_COVERED.get(ns, {}))
            functions = f"{cov} of {public}"
        else:
            functions = f"{len({r.case.fn for r in sel})} methods and operators"
        rate = counts["agree"] / max(1, n - counts["mlx-crash"])
        lines.append(f"| {ns} | {functions} | {n} | {counts['agree']} | {counts['allowed']} | {counts['gap']} | "
                     f"{counts['mlx-crash']} | {counts['differ']} | {100 * rate:.1f}% |")
    rate = total["agree"] / max(1, total["cases"] - total["mlx-crash"])
    lines.append(f"| all | | {total['cases']} | {total['agree']} | {total['allowed']} | {total['gap']} | "
                 f"{total['mlx-crash']} | {total['differ']} | {100 * rate:.1f}% |")
    return "\n".join(lines)


def gap_table(rows):
    """Markdown table of the known gaps by group: entries, functions and cases."""
    groups = {}
    for entry in GAPS:
        g = groups.setdefault(entry.group, {"entries": 0, "functions": set(), "cases": 0})
        g["entries"] += 1
        g["functions"].add(entry.fn)
        g["cases"] += sum(r.entry is entry for r in rows)
    if not groups:
        return "None: every difference from MLX is in the allow-list above."
    lines = ["| known gap | entries | functions | cases |", "|---|---|---|---|"]
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["cases"]):
        fns = ", ".join(f"`{f.removeprefix('snippet.')}`" for f in sorted(g["functions"]))
        lines.append(f"| {name} | {g['entries']} | {fns} | {g['cases']} |")
    return "\n".join(lines)


def tables(rows, api):
    return table(rows, api), gap_table(rows)
