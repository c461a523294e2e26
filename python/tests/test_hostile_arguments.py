"""Hostile arguments never take the interpreter down: every public function, called with
sizes past 2^31 and 2^63, NaN, wrong types, empty and huge arrays (differential/hostile.py),
returns or raises an ordinary exception, in child processes that see a crash as a crash."""

import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from differential import hostile, runner
from differential.spec import Case

CHILD = ("differential.hostile_child", lambda: sys.executable)
BATCH = 3000


@pytest.fixture(scope="module")
def outcomes():
    cases = hostile.cases()
    with tempfile.TemporaryDirectory() as d:
        jobs = [cases[i:i + BATCH] for i in range(0, len(cases), BATCH)]
        with ThreadPoolExecutor(2) as pool:
            parts = pool.map(lambda j: runner.run_batch(j[1], Path(d) / f"b{j[0]}", CHILD), enumerate(jobs))
            results = {k: v for part in parts for k, v in part.items()}
    return cases, results


def test_every_function_is_called(outcomes):
    cases, results = outcomes
    assert len(cases) > 50_000
    assert set(results) == {c.id for c in cases}


@pytest.mark.parametrize("bad", ["crash", "panic", "not an Exception", "input changed"])
def test_no_call_ends_badly(outcomes, bad):
    found = sorted(f"{k}: {v[1:]}" for k, v in outcomes[1].items() if v[0] == bad)
    assert not found, f"{len(found)} calls: {bad}:\n" + "\n".join(found[:40])


def test_the_child_cannot_allocate_past_its_cap():
    """A crash is only seen if an allocation the size of a user's number cannot succeed:
    a block of 2^31 float32 values must fail in the child (as a MemoryError)."""
    case = Case("cap", "random.uniform", (), {"shape": (2**31,)})
    with tempfile.TemporaryDirectory() as d:
        assert runner.run_batch([case], Path(d), CHILD) == {"cap": ("raise", "MemoryError")}
