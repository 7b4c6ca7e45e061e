"""Which shared tile groups a bare ``@pl.pipeline.stage`` writes and which it reads.

The real PyPTO Pro's stage decorator takes no arguments: its pipeline analyser reads each stage's
body. A tile taken from a group parameter (``t = g.next()``, ``g.current()``, ``g[i]``, or the
parameter itself) is *written* where it is the destination of a ``pl.<op>`` call (the first
argument of every tile op except the few below) or the pointer of a ``vf.store*`` in a vector
function it is passed to, and *read* where it is any other argument (``vf.load*`` in a vector
function, a source operand). A group a stage writes is one it produces; one it only reads is one
it consumes. Helper and vector functions called with such a tile are followed, with their
parameters bound to the call's positional arguments.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

# pl.<op>(...) calls whose first argument is not a destination written with data
_FIRST_NOT_WRITTEN = {"store", "store_tile", "set_validshape", "getval", "set_stride", "printf", "dump_data",
                      "pto_assert", "ssbuf_store"}
_TAKERS = {"next", "current", "previous"}


def _root(node: ast.AST) -> str | None:
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.BinOp):  # tile + offset (a VF pointer)
            node = node.left
        elif isinstance(node, ast.Subscript):  # g[i], tile[r0:r1, c0:c1]
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TAKERS:
            node = node.func.value  # g.next() used inline
        else:
            return None


def _fdef(fn: Callable) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef) else None


def _callee(fn: Callable, name: str) -> Callable | None:
    target = getattr(fn, "__globals__", {}).get(name)
    target = getattr(target, "__wrapped__", target)
    return target if inspect.isfunction(target) else None


def roles(fn: Callable, groups: set[str], depth: int = 0) -> dict[str, set[str]]:
    """``{param: {"W", "R"}}`` for the parameters of ``fn`` in ``groups`` that its body touches."""
    fdef = _fdef(fn)
    out: dict[str, set[str]] = {}
    if fdef is None or depth > 8:
        return out
    alias: dict[str, str] = {g: g for g in groups}
    for n in ast.walk(fdef):  # t = g.next() / g.current() / g[i] / g (any alias of a group parameter)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            r = _root(n.value)
            if r in alias and not isinstance(n.value, ast.BinOp):
                alias[n.targets[0].id] = alias[r]

    def mark(node: ast.AST, role: str) -> None:
        r = _root(node)
        if r in alias:
            out.setdefault(alias[r], set()).add(role)

    for n in ast.walk(fdef):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("pl", "vf"):
            op = f.attr
            for i, arg in enumerate(n.args):
                if f.value.id == "vf":
                    write = op.startswith("store") and i == 0
                    read = op.startswith("load")
                    if write or read:
                        mark(arg, "W" if write else "R")
                elif op in _TAKERS:
                    continue
                else:
                    mark(arg, "W" if i == 0 and op not in _FIRST_NOT_WRITTEN else "R")
        elif isinstance(f, ast.Name):
            callee = _callee(fn, f.id)
            if callee is None:
                continue
            params = list(inspect.signature(callee).parameters)
            bound = {params[i]: arg for i, arg in enumerate(n.args) if i < len(params)}
            mine = {p: alias[_root(a)] for p, a in bound.items() if _root(a) in alias}
            if not mine:
                continue
            for p, got in roles(callee, set(mine), depth + 1).items():
                out.setdefault(mine[p], set()).update(got)
    return out


def stage_roles(fn: Callable, shared_params: dict[str, str]) -> tuple[list[str], list[str]]:
    """``(produces, consumes)``: the kernel names of the shared groups bound to ``fn``'s parameters
    (``shared_params``: parameter -> kernel name) that the stage writes / only reads."""
    found: dict[str, Any] = roles(fn, set(shared_params))
    produces = [shared_params[p] for p in shared_params if "W" in found.get(p, ())]
    consumes = [shared_params[p] for p in shared_params if found.get(p) == {"R"}]
    return produces, consumes
