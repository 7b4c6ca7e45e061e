"""Assertions for located compile errors, shared by the frontend test files."""
from __future__ import annotations

import inspect
import os

from pypto_pro import CompileError

MARKER = "# <- here"


def marked_line(fn) -> tuple[str, int, str]:
    """(path, line number, text) of the line of ``fn``'s source carrying the marker comment."""
    lines, start = inspect.getsourcelines(fn)
    hits = [i for i, text in enumerate(lines) if MARKER in text]
    assert len(hits) == 1, f"{fn.__name__} must mark exactly one line with {MARKER!r}"
    return inspect.getsourcefile(fn), start + hits[0], lines[hits[0]]


def check_location(err: CompileError, path: str, line: int, text: str, token: str | None) -> None:
    """``err`` points at ``token`` (or at the first non-blank character) of ``text``, line ``line`` of ``path``."""
    col = text.index(token) + 1 if token else len(text) - len(text.lstrip()) + 1
    assert err.loc is not None, f"error has no location: {err}"
    assert os.path.realpath(err.loc.path) == os.path.realpath(path), str(err)
    assert (err.line, err.col) == (line, col), f"expected {line}:{col}, got {err.line}:{err.col}\n{err}"
    assert str(err).startswith(f"{path}:{line}:{col}: error: "), str(err)
    quoted = str(err).split("\n")
    assert quoted[1] == "    " + text.rstrip("\n"), str(err)
    assert quoted[2] == "    " + " " * (col - 1) + "^", str(err)


def line_of(fn, marker: str) -> str:
    """``path:line`` of the one source line of ``fn`` ending with the comment ``# <- marker``."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, f"marker '# <- {marker}' found {len(hits)} times"
    return f"{inspect.getsourcefile(fn)}:{hits[0]}"


def snippet_function(name: str, source: str, namespace: dict):
    """The function ``name`` defined by ``source``, compiled as the pseudo-file ``<name>`` registered
    in linecache (as IPython registers its cells), so ``inspect`` and the frontend read its source
    and locate errors in it like in a file. ``source`` sees a copy of ``namespace`` as its globals."""
    import linecache
    filename = f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope = dict(namespace)
    exec(compile(source, filename, "exec"), scope)
    return scope[name]


def one_line_kernel(name: str, line: str, namespace: dict, tensor: str = "T16", section: str | None = "section_vector",
                    tile: str | None = None):
    """``def name(x: tensor):`` with one statement, ``line``, marked ``# <- here``, built by
    ``snippet_function``. Without ``tile``: ``line`` comes first, then an empty ``with pl.<section>():``
    (none when ``section`` is None). With ``tile`` (the name of a TileType in ``namespace``): the kernel
    makes ``a = pl.make_tile(<tile>, addr=0x0)`` and ``line`` is the one statement of the section."""
    if tile is None:
        source = f"def {name}(x: {tensor}):\n    {line}  {MARKER}\n"
        if section is not None:
            source += f"    with pl.{section}():\n        pass\n"
    else:
        source = (f"def {name}(x: {tensor}):\n    a = pl.make_tile({tile}, addr=0x0)\n"
                  f"    with pl.{section}():\n        {line}  {MARKER}\n")
    return snippet_function(name, source, namespace)
