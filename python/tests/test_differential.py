"""Differential test against real MLX 0.32.4: every case of differential/cases.py runs on
MLX (in child processes of the Python in .venv-mlx, made by scripts/setup-python.sh) and
on lazulite, and the outcomes (value, dtype, shape, or exception class) must agree,
except where the allow-list (differential/allowed.py) says lazulite does better. Known
gaps (differential/known_gaps.py) must still differ, so fixing one fails the test until
its entry is removed. The agreement table in docs/differences.md is made from
these results by `python -m differential.report --write`."""

import re
from pathlib import Path

import pytest
from differential import harness
from differential.allowed import ALLOWED
from differential.cases import CASES, NOT_COVERED
from differential.known_gaps import GAPS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "differences.md"
FUNCTIONS = sorted({c.fn for c in CASES})


@pytest.fixture(scope="module")
def outcome():
    rows, api = harness.run()
    return {r.case.id: r for r in rows}, api


def show(rows):
    return "\n".join(f"  {r.case.id}: {r.kind}: {' '.join(r.detail.split())}" for r in rows[:15]) + (
        f"\n  ... and {len(rows) - 15} more" if len(rows) > 15 else "")


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_lazulite_agrees_with_mlx(outcome, fn):
    rows = [r for r in outcome[0].values() if r.case.fn == fn and r.status == "differ"]
    assert not rows, f"{len(rows)} cases of {fn} differ from MLX:\n{show(rows)}"


def test_known_gaps_are_still_open(outcome):
    """A known gap must match cases and still differ in at least one: once every case of
    an entry agrees with MLX, the entry must go (with its line in docs/differences.md)."""
    stale = []
    for entry in GAPS:
        rows = [r for r in outcome[0].values() if harness.matches(entry, r.case)]
        if not rows or all(r.status == "agree" for r in rows):
            stale.append(harness.entry_id(entry))
    assert not stale, f"known gaps that match no difference any more: {stale}"


@pytest.mark.parametrize("entry", ALLOWED, ids=harness.entry_id)
def test_allowed_difference_still_occurs(outcome, entry):
    """An allow-list entry must still describe a difference; else it is stale."""
    rows = [r for r in outcome[0].values() if r.entry is entry]
    assert rows, f"no case differs as allowed ({entry.why})"


@pytest.mark.parametrize("ns", [ns for ns in harness.NAMESPACES if ns != "array"])
def test_public_api_of_mlx_is_covered(outcome, ns):
    """Every public function of MLX's namespace has cases, or a reason it has none."""
    api = outcome[1]
    assert ns in api, f"MLX has no namespace {ns}"
    assert not harness.uncovered(ns, api), f"public names of MLX with no case: {harness.uncovered(ns, api)}"
    stale = sorted(set(NOT_COVERED.get(ns, {})) - set(api[ns]))
    assert not stale, f"names listed as not covered that MLX does not have: {stale}"


def test_mlx_is_the_version_followed(outcome):
    assert outcome[1]["version"] == "0.32.4"


@pytest.mark.parametrize("name", ["agreement table", "known gaps table"])
def test_tables_in_the_docs_are_current(outcome, name):
    rows, api = list(outcome[0].values()), outcome[1]
    found = re.search(rf"<!-- {name} -->\n(.*?)\n<!-- end {name} -->", DOCS.read_text(), re.S)
    assert found, f"docs/differences.md lacks the {name} markers"
    expected = dict(zip(["agreement table", "known gaps table"], harness.tables(rows, api)))[name]
    assert found.group(1).strip() == expected.strip(), (
        f"the {name} is out of date: in python/tests run `../../.venv/bin/python -m differential.report --write`")
