"""Every public ``vf.*`` operation has tests of its own (issue 13): some test file of this folder names it in
its module-level ``COVERED``, and says so only for tests against an independent NumPy reference over every
dtype the real page lists, masked and unmasked lanes, each merge mode and each dist / mode enum value the op
takes (the standard each file's docstring states). A new ``vf.*`` operation fails here until a file covers it."""
import importlib
from pathlib import Path

from pypto_pro.ops.vf.decl import VF_STUBS


def _covering_files() -> dict[str, list[str]]:
    """``vf.*`` name -> the test modules of this folder whose ``COVERED`` names it."""
    out: dict[str, list[str]] = {}
    for path in sorted(Path(__file__).parent.glob("test_vf_*.py")):
        if path.stem == Path(__file__).stem:
            continue
        for name in getattr(importlib.import_module(path.stem), "COVERED", ()):
            out.setdefault(name.removeprefix("vf."), []).append(path.stem)  # "add" or "vf.add"
    return out


def test_every_vf_operation_is_covered():
    missing = sorted(set(VF_STUBS) - set(_covering_files()))
    assert not missing, f"vf.* operations no test file covers (add them to a file's COVERED): {missing}"


def test_covered_names_are_vf_operations():
    unknown = {name: files for name, files in _covering_files().items() if name not in VF_STUBS}
    assert not unknown, f"COVERED names that are not vf.* operations: {unknown}"
