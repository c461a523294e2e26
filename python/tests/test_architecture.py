"""The layering of the Rust crates, read from their source with tools/import_graph.py: which
files may use which, and the only circles allowed among them."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import import_graph  # noqa: E402

CRATE = ROOT / "crates" / "lazulite" / "src"
FOUNDATION_MODULES = {"dtype", "shape", "element", "error"}
GLUE = ROOT / "crates" / "lazulite-py" / "src"


def uses_by_file(src):
    return {import_graph.name(m): {import_graph.name(t) for t in uses}
            for m, uses in import_graph.Crate(src).graph().items()}


@pytest.fixture(scope="module")
def graph():
    return uses_by_file(CRATE)


@pytest.fixture(scope="module")
def glue():
    return uses_by_file(GLUE)


def top(name):
    return name.split("/")[0]


@pytest.fixture(scope="module")
def foundation(graph):
    """The foundation's files: its modules and their submodules."""
    return {f for f in graph if top(f) in FOUNDATION_MODULES}


def test_the_foundation_uses_only_itself(graph, foundation):
    assert FOUNDATION_MODULES <= foundation
    for f in foundation:
        assert graph[f] <= foundation, f"{f} uses {graph[f] - foundation}"


def test_the_backend_uses_only_itself_and_the_foundation(graph, foundation):
    for f, uses in graph.items():
        if top(f) == "backend":
            outside = {u for u in uses if top(u) != "backend" and u not in foundation}
            assert not outside, f"{f} uses {outside}"


def test_nothing_below_the_ops_uses_them(graph, foundation):
    below = foundation | {"array", "eval", "primitive"}
    for f in below:
        ops = {u for u in graph[f] if top(u) in ("ops", "transforms")}
        assert not ops, f"{f} uses {ops}"


def test_ops_do_not_use_the_layers_above_them(graph):
    above = {"transforms", "export", "io", "dataflow", "graph_print", "lib"}
    # The fused `fast` kernels stand for a composition whose rules the transforms derive;
    # the quantized-input products are a composition with MLX's own derivative rule.
    allowed = {("ops/fast", "transforms/custom"), ("ops/qqmm", "transforms/custom")}
    for f, uses in graph.items():
        if top(f) == "ops":
            bad = {u for u in uses if top(u) in above and (f, u) not in allowed}
            assert not bad, f"{f} uses {bad}"


def test_the_only_circles(graph):
    """array, eval and primitive refer to one another (a node holds its primitive, a
    primitive's rules build arrays); op families use each other's functions in their
    rules (the derivative of sin is a product), so circles stay inside ops/. No other
    files form a circle: not ops with the transforms, not the backend with anything."""
    for component in import_graph.circles(graph):
        names = set(component)
        assert names == {"array", "eval", "primitive"} or all(top(n) == "ops" for n in names), names


# The Python glue (`lazulite.core`). Its classes and the stub hints are what every binding
# names; the conversions, DLPack, trees and `bind!` turn Python values into lazulite ones
# and back; the binding tables (one file per part of `mlx.core` and per submodule) sit on
# top of both.
GLUE_CLASSES = {"array", "dtype", "devices", "errors", "signature"}
GLUE_MACHINERY = {"bind", "convert", "dlpack", "trees"}


def test_the_glue_has_no_circles(glue):
    circles = import_graph.circles(glue)
    assert not circles, f"circles: {circles}"


def test_the_glue_classes_and_hints_use_only_one_another(glue):
    """So any file can name `PyArray`, `PyDtype` or `Hint` without a circle: the methods
    of the `array` class are bound elsewhere (array_methods, the tables, indexing, dlpack)."""
    for f in GLUE_CLASSES:
        assert glue[f] <= GLUE_CLASSES, f"{f} uses {glue[f] - GLUE_CLASSES}"


def test_the_glue_machinery_uses_no_binding_table(glue):
    below = GLUE_CLASSES | GLUE_MACHINERY
    for f in GLUE_MACHINERY:
        assert glue[f] <= below, f"{f} uses {glue[f] - below}"
