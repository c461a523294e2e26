"""Which source files of a Rust crate use which, and the circles among them.

    python tools/import_graph.py crates/lazulite/src          # circles, largest first
    python tools/import_graph.py crates/lazulite/src --edges  # every file's uses

A file uses another when it names an item defined there: through a `use` of a path
beginning with `crate::`, `super::` or `self::`, or such a path written in the code. A
path ending at a module that only re-exports (`crate::multiply`, `crate::ops::add`) is
followed to the file that defines the item. `python/tests/test_architecture.py` checks
the layering with it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DEFINITION = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?"
    r"(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(\w+)"
    r"|^macro_rules!\s*(\w+)",
    re.M,
)
# Items are defined at the top of a file (methods and local items are not). Functions
# and methods a table macro defines from its rows, as `[name] Variant, ...`.
ROW_FUNCTION = re.compile(r"^\s*\[(\w+)\]\s+[A-Z]\w*,", re.M)
# `$crate::` in a macro's template is a use by the code the macro expands into.
PATH = re.compile(r"(?<!\$)\b(crate|super|self)((?:::\w+)+)")
USE = re.compile(r"\buse\s+((?:crate|super|self)::[^;]*);", re.S)
PUB_USE = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", re.S)
COMMENT = re.compile(r"//[^\n]*")
INLINE_MODULE = re.compile(r"(#\[cfg\(test\)\]\s*)?^[ \t]*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", re.M)


def source(file: Path) -> str:
    """The file's code without comments and unit tests; inside an inline module, `super`
    (the file itself) is written `self`."""
    text = COMMENT.sub("", file.read_text())
    pos = 0
    while m := INLINE_MODULE.search(text, pos):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = "" if m.group(1) else text[m.end(): i - 1].replace("super::", "self::")
        text = text[: m.start()] + body + text[i:]
        pos = m.start() + len(body)
    return text


def module_of(root: Path, file: Path) -> tuple[str, ...]:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def expand_use(tree: str) -> list[str]:
    """`crate::a::{b, c::{d, e}}` as the paths `crate::a::b`, `crate::a::c::d`, ..."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    if "{" not in tree:
        return [tree]
    head, _, rest = tree.partition("{")
    body = rest[: rest.rfind("}")]
    items, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    out = []
    for item in filter(None, items):
        for sub in expand_use(item):
            out.append(head + sub if sub != "self" else head.rstrip(":"))
    return out


class Crate:
    def __init__(self, root: Path):
        self.root = root
        self.files = {module_of(root, f): f for f in sorted(root.rglob("*.rs"))}
        self.defines: dict[tuple[str, ...], set[str]] = {}
        for module, file in self.files.items():
            text = source(file)
            names = {a or b for a, b in DEFINITION.findall(text)}
            names |= set(ROW_FUNCTION.findall(text))
            self.defines[module] = names

    def definer(self, module: tuple[str, ...], name: str, seen=None) -> tuple[str, ...]:
        """The file that defines `name` as seen from `module`: the module itself, or the
        file its `pub use` re-exports lead to (the module itself if they lead nowhere)."""
        if name in self.defines.get(module, ()):
            return module
        seen = seen or set()
        if module in seen or module not in self.files:
            return module
        seen.add(module)
        for tree in PUB_USE.findall(source(self.files[module])):
            for path in expand_use(tree):
                last = path.rsplit("::", 1)[-1]
                if last == name:
                    return self.resolve(module, path) or module
                if last == "*":
                    target = self.module_path(module, path[:-3])
                    if target is not None:
                        found = self.definer(target, name, seen)
                        if name in self.defines.get(found, ()):
                            return found
        # `#[macro_export]` macros live at the crate root wherever they are written.
        writers = [m for m in self.files if name in self.defines[m]]
        return writers[0] if module == () and len(writers) == 1 else module

    def module_path(self, here: tuple[str, ...], path: str) -> tuple[str, ...] | None:
        """The module a path names (a glob's parent), if it is a file."""
        parts = path.split("::")
        base = () if parts[0] == "crate" else here
        parts = parts[1:] if parts[0] == "crate" else parts
        for p in parts:
            if p == "super":
                base = base[:-1]
            elif p != "self":
                base = base + (p,)
        return base if base in self.files else None

    def resolve(self, here: tuple[str, ...], path: str) -> tuple[str, ...] | None:
        parts = path.split("::")
        if parts[0] == "crate":
            base, rest = (), parts[1:]
        else:
            base = here
            while parts and parts[0] in ("super", "self"):
                if parts[0] == "super":
                    base = base[:-1]
                parts = parts[1:]
            rest = parts
        module = base
        for i, p in enumerate(rest):
            if module + (p,) in self.files:
                module = module + (p,)
                continue
            if p == "*":
                return None
            return self.definer(module, p)
        return module

    def uses(self, module: tuple[str, ...]) -> set[tuple[str, ...]]:
        text = source(self.files[module])
        here = module
        out = set()
        for tree in USE.findall(text):
            for path in expand_use(tree):
                if path.endswith("::*"):
                    parent = self.resolve(here, path[:-3] + "::self_") or ()
                    parent = parent if parent in self.files else parent[:-1]
                    # A glob: every item of the parent's files that this file names.
                    words = set(re.findall(r"\b\w+\b", text))
                    for m in self.files:
                        if m[: len(parent)] == parent and m != module and self.defines[m] & words:
                            out.add(m)
                    continue
                target = self.resolve(here, path)
                if target is not None:
                    out.add(target)
        for kind, tail in PATH.findall(USE.sub("", text)):
            target = self.resolve(here, kind + tail)
            if target is not None:
                out.add(target)
        out.discard(module)
        return {m for m in out if m in self.files}

    def graph(self) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
        return {m: self.uses(m) for m in self.files}


def circles(graph: dict) -> list[list]:
    """The strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(out, key=len, reverse=True)


def name(module: tuple[str, ...]) -> str:
    return "/".join(module) or "lib"


def main() -> None:
    crate = Crate(Path(sys.argv[1]))
    graph = crate.graph()
    if "--edges" in sys.argv:
        for m in sorted(graph):
            print(f"{name(m)}: {', '.join(sorted(name(t) for t in graph[m]))}")
        return
    for component in circles(graph):
        print(f"{len(component)} files: {', '.join(name(m) for m in component)}")


if __name__ == "__main__":
    main()
