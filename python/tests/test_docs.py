"""Runs the Python examples of the guide (`docs/*.md` and `README.md`) and checks what
they print.

The convention, for anyone writing a page:

- Every fenced block opened with ```python is run. The blocks of one page run in order,
  in one namespace, as at one interactive prompt, inside a fresh temporary directory.
- If the next thing after a python block (blank lines aside) is a fenced ```text block,
  the python block's printed output must equal that text. A python block with no such
  block after it must print nothing.
- Rust blocks are doctests of the crate (`crates/lazulite/src/lib.rs` includes the
  pages). Rust cannot capture its own printing, so a Rust block followed by a text block
  checks its output with hidden lines `# assert_eq!(..., "printed text");`; the string
  literals of those assertions, each ending a line, must spell the text block.
- A block that cannot run here (it needs several processes, say) is preceded by the line
  `<!-- not run: reason -->`; the reason is required.

One test per page: a failure names the page, the line of the block and the difference.
"""

import contextlib
import difflib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)[^\n]*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*\S.*-->\s*$")


def blocks(text):
    """The fenced blocks of a Markdown text as (language, first line of code, code,
    skipped) in order; `first line` counts from 1."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        ticks, lang = m.group(1), m.group(2)
        start = i + 1
        j = start
        while j < len(lines) and lines[j].strip() != ticks:
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: the block opened here is never closed")
        indent = len(lines[i]) - len(lines[i].lstrip())
        code = "\n".join(line[indent:] for line in lines[start:j])
        prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        found.append((lang, start + 1, code, bool(NOT_RUN.match(prev.strip()))))
        i = j + 1
    return found


def examples(text, language="python"):
    """The blocks of one language in a page as (line, code, expected output or None,
    skipped): the expected output is the text block that follows, if any."""
    found = blocks(text)
    lines = text.split("\n")
    result = []
    for n, (lang, line, code, skipped) in enumerate(found):
        if lang != language:
            continue
        expected = None
        if n + 1 < len(found) and found[n + 1][0] == "text":
            # Only blank lines may stand between the block's closing fence and the text
            # block's opening one.
            close = line + code.count("\n") + 1  # 1-based line of the closing fence
            between = lines[close : found[n + 1][1] - 2]
            if all(not s.strip() for s in between):
                expected = found[n + 1][2] + "\n"
        result.append((line, code, expected, skipped))
    return result


def pages_with_examples():
    return [p for p in PAGES if any(lang == "python" for lang, *_ in blocks(p.read_text()))]


def test_the_collector_reads_the_convention():
    page = "\n".join([
        "Text.", "", "```python", "print(1 + 1)", "```", "", "```text", "2", "```",
        "", "```python", "x = 3", "```", "Prose.", "```text", "not output", "```",
        "<!-- not run: needs two processes -->", "```python", "boom()", "```",
    ])
    assert examples(page) == [
        (4, "print(1 + 1)", "2\n", False),
        (12, "x = 3", None, False),
        (20, "boom()", None, True),
    ]


@pytest.mark.parametrize(
    "page", pages_with_examples(), ids=lambda p: str(p.relative_to(ROOT))
)
def test_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = str(page.relative_to(ROOT))
    namespace = {"__name__": "__main__"}
    for line, code, expected, skipped in examples(page.read_text()):
        if skipped:
            continue
        # Padding keeps tracebacks pointing at the page's own line numbers.
        compiled = compile("\n" * (line - 1) + code, name, "exec")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                exec(compiled, namespace)
            except Exception as e:
                raise AssertionError(
                    f"{name}, block at line {line} raised {type(e).__name__}: {e}"
                ) from e
        printed = out.getvalue()
        if expected is None:
            assert printed == "", (
                f"{name}, block at line {line} printed output that the page does not show "
                f"(add a ```text block after it):\n{printed}"
            )
        elif printed != expected:
            diff = "".join(difflib.unified_diff(
                expected.splitlines(True), printed.splitlines(True), "page", "printed"
            ))
            raise AssertionError(f"{name}, block at line {line}: output differs\n{diff}")


def test_every_page_with_rust_examples_is_a_doctest():
    """Rust examples run as doctests of the crate: each page that has one must be
    included by `crates/lazulite/src/lib.rs`."""
    lib = (ROOT / "crates/lazulite/src/lib.rs").read_text()
    for page in PAGES:
        if any(lang == "rust" for lang, *_ in blocks(page.read_text())):
            rel = page.relative_to(ROOT)
            assert f'include_str!("../../../{rel}")' in lib, f"{rel} is not a doctest"


def load_tool(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_graph_pictures_show_their_dot_text():
    """Each committed graph picture (tools/render_doc_graphs.py) shows the node labels and
    edges of the DOT text it was drawn from; no Graphviz needed."""
    import html

    render = load_tool(ROOT / "tools/render_doc_graphs.py")
    pairs = [pair for page in PAGES for pair in render.graphs(page)]
    assert pairs, "the guide shows at least one graph"
    for source, svg in pairs:
        picture = svg.read_text()
        labels = re.findall(r'label="([^"]*)"', source)
        expected = sorted(part for label in labels for part in label.split("\\n"))
        shown = sorted(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", picture))
        assert shown == expected, f"{svg.name} is stale: run tools/render_doc_graphs.py"
        edges = sorted(re.findall(r"(n\d+) -> (n\d+);", source))
        drawn = sorted(tuple(html.unescape(t).split("->"))
                       for t in re.findall(r"<title>(n\d+&#45;&gt;n\d+)</title>", picture))
        assert drawn == edges, f"{svg.name} is stale: run tools/render_doc_graphs.py"


def test_benchmark_chart_reads_the_latest_table():
    """bench/chart.py finds every workload it draws in docs/benchmarks.md (matplotlib is
    only needed to draw, not to read)."""
    chart = load_tool(ROOT / "bench/chart.py")
    rows = chart.read_table((ROOT / "docs/benchmarks.md").read_text())
    data = dict(chart.speedups(rows, chart.SELECTION))
    assert data["matmul float32 2048"][2] > 10  # MLX's CPU matmul is far slower
    assert data["matmul bfloat16 2048"][0] is None  # NumPy has no bfloat16
    assert (ROOT / "docs/images/benchmarks.svg").exists()


def test_benchmark_figures_go_into_the_latest_table():
    """`bench/compare.py --write` replaces the machine lines, the rows it measured and its
    notes in the Latest table of docs/benchmarks.md, keeps every other row and line, and
    leaves a table bench/chart.py reads."""
    compare = load_tool(ROOT / "bench/compare.py")
    chart = load_tool(ROOT / "bench/chart.py")
    text = (ROOT / "docs/benchmarks.md").read_text()
    header = "| " + " | ".join(chart.HEADER) + " |"
    rows = ["| sort 1M | 1.000 | 2.000 | 3.000 | 4.000 | 0.50 |",
            "| a new workload | 1.000 | n/a | n/a | n/a | n/a |"]
    machine = ["# a machine", "# median ms"]
    new = compare.write_latest(text, machine, header, rows, ["# dataflow: new figures"])
    before, after = chart.read_table(text), chart.read_table(new)
    assert after.pop("sort 1M") == {"lazulite": 1.0, "numpy": 2.0, "jax": 3.0, "mlx": 4.0}
    assert after.pop("a new workload")["numpy"] is None
    before.pop("sort 1M")
    assert after == before

    def latest(doc):
        start = doc.index("## Latest")
        return doc[start:doc.index("\n## ", start)]

    section = latest(new)
    assert "\\# a machine\n\\# median ms\n\n| workload" in section
    assert section.count("\\# dataflow:") == 1 and "\\# dataflow: new figures" in section
    assert new.replace(section, "") == text.replace(latest(text), "")
    assert compare.write_latest(new, machine, header, rows, ["# dataflow: new figures"]) == new
    with pytest.raises(ValueError, match="columns"):
        compare.write_latest(text, machine, "| workload | lazulite | numpy | ratio |", rows, [])


def test_rust_example_check_finds_items_and_methods_without_one(tmp_path):
    """tools/check_rust_examples.py on pages shaped like rustdoc's: an item or an inherent
    method without a code block is listed (and fails the check), a redirect page and a
    trait implementation's method are not."""
    import subprocess
    import sys

    tool = ROOT / "tools/check_rust_examples.py"
    example = '<div class="example-wrap"><pre class="rust"><code>f();</code></pre></div>'

    def top(body):
        return f'<details class="toggle top-doc" open><summary>x</summary><div class="docblock">{body}</div></details>'

    def method(name, doc=None, line=1):
        heading = (f'<section id="method.{name}" class="method"><a class="src rightside" '
                   f'href="../src/demo/lib.rs.html#{line}">Source</a><h4>pub fn {name}()</h4></section>')
        if doc is None:
            return heading
        return (f'<details class="toggle method-toggle" open><summary>{heading}</summary>'
                f'<div class="docblock">{doc}</div></details>')

    def page(main):
        return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><main>{main}</main></body></html>"

    crate = tmp_path / "demo"
    (crate / "inner").mkdir(parents=True)
    (crate / "index.html").write_text(page(top("<p>Overview.</p>" + example)))
    (crate / "fn.shown.html").write_text(page(top("<p>Has one.</p>" + example)))
    (crate / "fn.bare.html").write_text(page(top("<p>Prose only.</p>")))
    (crate / "inner" / "fn.bare.html").write_text(
        '<html><head><meta http-equiv="refresh" content="0;URL=../fn.bare.html"></head></html>')
    (crate / "struct.Thing.html").write_text(page(
        top("<p>A thing.</p>" + example)
        + '<h2 id="implementations" class="section-header">Implementations</h2><div id="implementations-list">'
        + method("good", '<p>Doc.</p><h2 id="examples">Examples</h2>' + example)
        + method("undocumented", line=2)
        + method("prose", "<p>No code.</p>", line=3)
        + '</div><h2 id="trait-implementations" class="section-header">Trait Implementations</h2>'
        + method("clone", line=9)))

    def check(*args):
        run = subprocess.run([sys.executable, tool, crate, *args], capture_output=True, text=True)
        return run.returncode, [line for line in run.stdout.splitlines() if line.startswith("no example")]

    code, listed = check()
    assert code == 1
    assert listed == ["no example: fn       demo::bare", "no example: method   demo::Thing::undocumented",
                      "no example: method   demo::Thing::prose"]
    (crate / "fn.bare.html").unlink()
    assert check("--items-only") == (0, listed[1:])
    assert check()[0] == 1
HIDDEN_ASSERT = re.compile(r'^\s*# assert_eq!\(.*, "((?:[^"\\]|\\.)*)"\);\s*$')


def test_rust_examples_assert_the_output_they_show():
    for page in PAGES:
        for line, code, expected, _ in examples(page.read_text(), "rust"):
            if expected is None:
                continue
            asserted = ""
            for source in code.split("\n"):
                m = HIDDEN_ASSERT.match(source)
                if m:
                    literal = m.group(1).encode().decode("unicode_escape")
                    asserted += literal if literal.endswith("\n") else literal + "\n"
            assert asserted == expected, (
                f"{page.relative_to(ROOT)}, Rust block at line {line}: its hidden assertions "
                f"check\n{asserted}but the page shows\n{expected}"
            )
