"""Runs the cases on real MLX in child processes (with crash isolation and a cache) and on
lazulite in this process."""

import os
import pickle
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import spec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BATCH = 400
# A child that records no outcome for this long is stuck (MLX's CPU build has been seen to
# spin on a case that returns at once in a fresh process): it is stopped and the case is
# run alone.
STALL = 20


def mlx_python():
    """The Python of the virtual environment holding real MLX: $LAZULITE_MLX_PYTHON, or
    .venv-mlx (made by scripts/setup-python.sh)."""
    explicit = os.environ.get("LAZULITE_MLX_PYTHON")
    path = Path(explicit) if explicit else ROOT / ".venv-mlx" / "bin" / "python"
    if not path.exists():
        raise RuntimeError(
            f"no real MLX at {path}: run `bash scripts/setup-python.sh` (it makes .venv-mlx) "
            "or set LAZULITE_MLX_PYTHON to a Python that has mlx==0.32.4")
    return str(path)


def cache_dir():
    d = Path(os.environ.get("LAZULITE_DIFF_CACHE", ROOT / ".venv-mlx" / "differential-cache"))
    d.mkdir(parents=True, exist_ok=True)
    return d


MLX_CHILD = ("differential.mlx_child", mlx_python)


def child(args, progress=None, kind=MLX_CHILD, cwd=None):
    """Runs a child to its end: (return code, stderr), or (None, "") when it stalled:
    `progress` (a file the child appends to) did not grow for STALL seconds. `kind` is the
    child's module and a function giving the Python that runs it (real MLX's by default)."""
    module, python = kind
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), PYTHONHASHSEED="0")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([python(), "-m", module, *args], env=env, cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err)
        size, since = -1, time.monotonic()
        while proc.poll() is None:
            time.sleep(0.05)
            now = os.path.getsize(progress) if progress and os.path.exists(progress) else 0
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since > STALL:
                proc.kill()
                proc.wait()
                return None, ""
        err.seek(0)
        return proc.returncode, err.read().decode(errors="replace")


def read_appended(path):
    out = []
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    out.append(pickle.load(f))
                except (EOFError, pickle.UnpicklingError):
                    break
    except FileNotFoundError:
        pass
    return out


def run_batch(cases, tmp, kind=MLX_CHILD):
    """Outcomes of `cases` in `kind` of child (real MLX's by default): {id: outcome}. A
    case that kills the child is run alone; if it kills that child too it is recorded as
    ("crash", how)."""
    tmp.mkdir(parents=True, exist_ok=True)
    results = {}
    todo = list(cases)
    n = 0
    while todo:
        n += 1
        cases_file, out_file = tmp / f"cases{n}.pkl", tmp / f"out{n}.pkl"
        cases_file.write_bytes(pickle.dumps(todo, protocol=4))
        code, err = child([str(cases_file), str(out_file)], progress=out_file, kind=kind, cwd=tmp)
        how = f"no outcome after {STALL} s" if code is None else f"exit status {code}: {err.strip()[-300:]}"
        died = code != 0
        done = read_appended(out_file)
        for case_id, outcome in done:
            results[case_id] = outcome
        todo = todo[len(done):]
        if not died or not todo:
            if todo:  # the child ended early without dying: should not happen
                raise RuntimeError(f"child stopped after {len(done)} cases: {how}")
            break
        suspect, todo = todo[0], todo[1:]
        if len(done) == 0 and len(todo) == 0:
            results[suspect.id] = ("crash", how)
            continue
        alone = run_batch([suspect], tmp / f"alone{n}", kind)
        results.update(alone)
    return results


def run_mlx(cases):
    """Outcomes of all cases on real MLX, from the cache when the same cases (and the same
    harness code) ran before."""
    code = "".join((HERE / f).read_text() for f in ("spec.py", "mlx_child.py", "snippets.py"))
    key = spec.digest((cases, code))
    cached = cache_dir() / f"mlx-{key}.pkl"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    results = {}
    together = [c for c in cases if not c.alone]
    with tempfile.TemporaryDirectory() as d:
        jobs = [together[i:i + BATCH] for i in range(0, len(together), BATCH)]
        jobs += [[c] for c in cases if c.alone]
        # Two children at a time: the machine this runs on in CI has two cores.
        with ThreadPoolExecutor(2) as pool:
            for out in pool.map(lambda j: run_batch(j[1], Path(d) / f"b{j[0]}"), enumerate(jobs)):
                results.update(out)
        api_file = Path(d) / "api.pkl"
        code, err = child(["--api", str(api_file)])
        if code != 0:
            raise RuntimeError(err)
        api = pickle.loads(api_file.read_bytes())
    out = {"results": results, "api": api}
    cached.write_bytes(pickle.dumps(out, protocol=4))
    return out


def lazulite_lib():
    import lazulite.core as core
    import lazulite.nn as nn
    import lazulite.optimizers as optimizers
    import lazulite.utils as utils

    return spec.Lib(core, nn, optimizers, utils)


def run_lazulite(cases):
    libs = lazulite_lib()
    return {case.id: spec.evaluate(case, libs) for case in cases}


if __name__ == "__main__":
    sys.exit("use differential.report")
