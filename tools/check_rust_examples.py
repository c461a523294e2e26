"""Public Rust items whose documentation shows no code example, read from rustdoc's HTML.

    cargo doc --no-deps -p lazulite
    python tools/check_rust_examples.py                  # target/doc/lazulite
    python tools/check_rust_examples.py path/to/doc/crate

Two lists are printed:

- **items**: every item page (function, struct, enum, union, trait, macro, type alias,
  constant, static) whose top documentation has no code block;
- **methods**: every method, associated function, associated constant and associated
  type shown on those pages (a type's inherent impls, a trait's own items) whose
  documentation has no code block. Trait implementations (`impl Add for Array`, ...) are left out: their
  documentation is the trait's.

Module pages are not checked, except the crate's own page, which must carry an example
(the crate-level overview): a module's page lists its items, and each of those shows its
own example, so one on the module would only repeat them.

The exit status is 1 when any item or method lacks an example (0 otherwise); with
`--items-only` missing methods are printed but do not fail. `scripts/docs.sh` runs this
after `cargo doc`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# Item pages are named `<kind>.<name>.html`.
ITEM_PAGE = re.compile(r"^(fn|struct|enum|union|trait|macro|type|constant|static|traitalias)\.(.+)\.html$")
# Sections of an item page whose entries are the item's own methods and associated items:
# a type's inherent impls, a trait's required and provided items.
OWN_ITEMS = re.compile(r"^(implementations|(required|provided)-(methods|associated-\w+))$")
# Anchors of associated items.
ASSOCIATED = re.compile(r"^(method|tymethod|associatedconstant|associatedtype)\.(\w+)")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """Reads one rustdoc page: whether its top documentation and each associated item's
    documentation contain a rendered code example (`example-wrap`)."""

    def __init__(self, crate_src: str) -> None:
        super().__init__(convert_charrefs=True)
        self.crate_src = crate_src
        self.depth = 0
        self.top_doc_has_example: bool | None = None  # None: no documentation at all
        self.items: dict[str, bool] = {}  # associated item -> has an example
        self.in_own_section = False
        self.anchor: str | None = None  # "top", or the associated item being read
        self.docblock_depth: int | None = None  # depth of the open docblock, if any
        self.docblock_owner: str | None = None
        self.docblock_example = False
        self.section: tuple[str, int] | None = None  # an associated item's heading
        self.section_in_crate = False
        self.redirect = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if tag == "meta" and a.get("http-equiv") == "refresh":
            self.redirect = True
        if self.docblock_depth is not None:
            if "example-wrap" in classes:
                self.docblock_example = True
        else:
            if tag == "h2" and a.get("id"):
                self.in_own_section = bool(OWN_ITEMS.match(a["id"]))
            if tag == "details" and "top-doc" in classes:
                self.anchor = "top"
            if tag == "section":
                m = ASSOCIATED.match(a.get("id", ""))
                if m and self.in_own_section:
                    self.anchor = m.group(2)
                    self.section = (m.group(2), self.depth)
                    self.section_in_crate = False
                else:
                    self.anchor = None
            if self.section is not None and tag == "a" and "src" in classes:
                self.section_in_crate = self.crate_src in a.get("href", "")
            if tag == "div" and "docblock" in classes and self.anchor is not None:
                self.docblock_depth = self.depth
                self.docblock_owner = self.anchor
                self.docblock_example = False
        if tag not in VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        self.depth -= 1
        if self.section is not None and tag == "section" and self.depth == self.section[1]:
            # An undocumented item has a heading and no docblock.
            if self.section_in_crate:
                self.items.setdefault(self.section[0], False)
            else:
                self.anchor = None
            self.section = None
        if self.docblock_depth is not None and tag == "div" and self.depth == self.docblock_depth:
            owner = self.docblock_owner
            if owner == "top":
                self.top_doc_has_example = self.docblock_example
            elif owner is not None and owner in self.items:
                self.items[owner] = self.items[owner] or self.docblock_example
            self.docblock_depth = None
            self.anchor = None


def scan(doc_dir: Path) -> tuple[bool, list[str], list[str], int, int]:
    """The crate page's example, the items and the methods without one, and how many
    items and methods were read."""
    crate_src = f"/src/{doc_dir.name}/"
    index = Page(crate_src)
    index.feed((doc_dir / "index.html").read_text(encoding="utf-8"))
    items: list[str] = []
    methods: list[str] = []
    n_items = n_methods = 0
    for path in sorted(doc_dir.rglob("*.html")):
        m = ITEM_PAGE.match(path.name)
        if not m:
            continue
        page = Page(crate_src)
        page.feed(path.read_text(encoding="utf-8"))
        if page.redirect:  # a private module's path to an item re-exported elsewhere
            continue
        module = "::".join(path.relative_to(doc_dir).parent.parts)
        name = "::".join(p for p in (doc_dir.name, module, m.group(2)) if p)
        n_items += 1
        if not page.top_doc_has_example:
            items.append(f"{m.group(1):8} {name}")
        for method, has_example in page.items.items():
            n_methods += 1
            if not has_example:
                methods.append(f"{name}::{method}")
    return bool(index.top_doc_has_example), items, methods, n_items, n_methods


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = Path(os.environ.get("CARGO_TARGET_DIR", "target"))
    parser.add_argument("doc_dir", nargs="?", type=Path, default=target / "doc" / "lazulite")
    parser.add_argument("--items-only", action="store_true", help="print missing methods without failing on them")
    args = parser.parse_args()
    if not (args.doc_dir / "index.html").is_file():
        print(f"{args.doc_dir}/index.html not found: run cargo doc first", file=sys.stderr)
        return 2
    crate_ok, items, methods, n_items, n_methods = scan(args.doc_dir)
    if not crate_ok:
        print(f"the crate page {args.doc_dir}/index.html has no example")
    for line in items:
        print(f"no example: {line}")
    for line in methods:
        print(f"no example: method   {line}")
    print(
        f"rust examples: {len(items)} of {n_items} item pages and "
        f"{len(methods)} of {n_methods} methods lack one"
    )
    failed = not crate_ok or items or (methods and not args.items_only)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
