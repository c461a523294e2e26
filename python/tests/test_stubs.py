"""The committed type stubs are the ones the binding tables generate."""

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_stubs_are_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "tools" / "gen_stubs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (ROOT / "python" / "lazulite" / "core.pyi").read_text()
    assert committed == gen.render(), "run: .venv/bin/python tools/gen_stubs.py"
    ast.parse(committed)


def test_every_public_name_has_a_stub():
    import lazulite.core as mx

    stubbed = (ROOT / "python" / "lazulite" / "core.pyi").read_text()
    for name in dir(mx):
        if not name.startswith("_"):
            assert f"def {name}(" in stubbed or f"class {name}" in stubbed or f"\n{name}:" in stubbed, name
