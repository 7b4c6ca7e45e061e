"""Every ``python`` block of docs/language.md that is not marked ``# fragment`` runs as written (its
asserts hold), so the language reference cannot drift from the language."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"
TEXT = DOC.read_text()
BLOCKS = [(TEXT[:m.start()].count("\n") + 1, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", TEXT, re.S)]
RUNNABLE = [(line, code) for line, code in BLOCKS if not code.lstrip().startswith("# fragment")]


def test_the_page_has_runnable_blocks():
    assert len(RUNNABLE) >= 10


@pytest.mark.parametrize("line,code", RUNNABLE, ids=[f"L{line}" for line, _ in RUNNABLE])
def test_block_runs(line, code, tmp_path):
    path = tmp_path / f"language_md_L{line}.py"
    path.write_text(code)
    runpy.run_path(str(path), run_name="__main__")
