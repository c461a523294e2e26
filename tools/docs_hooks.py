"""MkDocs hook: Rust examples show what rustdoc shows. Lines of a ```rust block whose
first non-blank characters are `# ` (or a lone `#`) are hidden by rustdoc, which still
compiles and runs them (setup and assertions); the site leaves them out too."""

import re

FENCE = re.compile(r"^(\s*)(`{3,})\s*rust\b.*$")
HIDDEN = re.compile(r"^\s*#(\s|$)")


def on_page_markdown(markdown, **kwargs):
    out = []
    closing = None
    for line in markdown.split("\n"):
        if closing is None:
            m = FENCE.match(line)
            if m:
                closing = m.group(2)
            out.append(line)
        elif line.strip() == closing:
            closing = None
            out.append(line)
        elif not HIDDEN.match(line):
            out.append(line)
    return "\n".join(out)
