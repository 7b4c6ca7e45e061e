"""Automatic Cube <-> Vector pipelining: ``@pl.jit(pipeline=pl.pipeline.PipelineConfig(preload=2))``.

Stage functions (``@pl.pipeline.stage``) hold one engine's work (their body has a
``pl.section_cube()`` or ``pl.section_vector()``); a kernel loop that calls stages in order is
rewritten so that each consumer stage runs ``preload`` iterations behind its producer. Tile
groups shared by a writer stage on one engine and a reader stage on the other declare
``fwd_ids`` (data ready) and ``bwd_ids`` (buffer free), one cross-core event id per slot.

The rewritten kernel is written to the build directory as ``pipeline_generated.py``; it uses the
four sync intrinsics below, which authors may also call by hand. ``transform_pipeline`` is the
transform itself with the real signature (a kernel's AST in, the pipelined kernel's AST out).
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pypto_pro.language.intrinsic import intrinsic

F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class PipelineConfig:
    """``preload``: iterations a producer stage runs ahead of its consumer (0 = serial order; the
    real default is 2: ``runtime/pipeline/config.py``). ``sync_only``: keep the serial loop and only
    insert the cross-core syncs."""

    preload: int = 2
    sync_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.preload, int) or isinstance(self.preload, bool) or self.preload < 0:
            raise ValueError(f"PipelineConfig.preload must be an int >= 0, got {self.preload!r}")
        if not isinstance(self.sync_only, bool):
            raise ValueError("PipelineConfig.sync_only must be True or False")


def stage(fn: F | None = None, *, produces: tuple[str, ...] | list[str] = (),
          consumes: tuple[str, ...] | list[str] = ()) -> Any:
    """Mark a pipeline stage: inlined into the kernel like ``@pl.inline``, scheduled by the
    pipeline transform. ``produces`` / ``consumes`` name the stage's parameters bound to shared
    tile groups it writes / reads (``@pl.pipeline.stage(produces=["s"])``)."""
    def mark(f: F) -> F:
        f.__pypto_inline__ = True  # type: ignore[attr-defined]
        f.pipeline_stage = True  # type: ignore[attr-defined]  (the real mark, read by is_pipeline_stage)
        f.__pypto_stage__ = (tuple(produces), tuple(consumes))  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


def is_pipeline_stage(fn: Any) -> bool:
    """Whether ``fn`` was marked by ``@pl.pipeline.stage`` (as the real ``is_pipeline_stage``)."""
    return callable(fn) and bool(getattr(fn, "pipeline_stage", False))


@intrinsic("pipeline.wait_free")
def wait_free(group: Any, slot: Any = None, min_depth: int = 1) -> None:
    """Writer side: wait until the reader released the slot ``group.next()`` returns next (or ``slot``)."""


@intrinsic("pipeline.signal_ready")
def signal_ready(group: Any, slot: Any = None) -> None:
    """Writer side: the current slot (or ``slot``) holds data for the reader."""


@intrinsic("pipeline.wait_ready")
def wait_ready(group: Any, slot: Any = None, min_depth: int = 1) -> None:
    """Reader side: wait until the slot ``group.next()`` returns next (or ``slot``) holds data."""


@intrinsic("pipeline.signal_free")
def signal_free(group: Any, slot: Any = None) -> None:
    """Reader side: the current slot (or ``slot``) may be overwritten."""


def transform_pipeline(func_def: ast.FunctionDef, closure_vars: dict, config: PipelineConfig,
                       if_const_map: dict | None = None, var_types: dict | None = None,
                       tilingkey_consts: dict | None = None, datatype_consts: dict | None = None) -> ast.FunctionDef:
    """The preload pipeline transform (the real ``runtime/pipeline/_transformer.py`` entry point, which
    ``@pl.jit(pipeline=...)`` runs before parsing): ``func_def`` (not mutated) rewritten so that each
    consumer stage runs ``config.preload`` iterations behind its producer, with the cross-core syncs of
    the shared groups (``config.sync_only``: the serial loop plus the syncs).

    ``closure_vars`` resolve the stage functions and constants the kernel names, with
    ``tilingkey_consts`` / ``datatype_consts`` (this launch's TilingKey fields and datatype symbols)
    folded in, as the real one does. ``if_const_map`` (``{ast.unparse(test): (is_const, value)}``)
    prunes compile-time ``if`` branches first. ``var_types`` is accepted for the real signature; ours
    finds how each argument reaches its stage from the kernel itself. The result is DSL code for
    pypto_pro's frontend (its syncs are the ``pl.pipeline.*`` intrinsics above); its nodes carry the
    line and column of the statement of ``func_def`` they come from. Errors are CompileErrors located
    at ``func_def``'s own line numbers."""
    from pypto_pro.frontend.diagnostics import SourceFile
    from pypto_pro.frontend.pipeline_transform import transform
    from pypto_pro.frontend.scope import Scope
    if not isinstance(func_def, ast.FunctionDef):
        raise TypeError(f"transform_pipeline takes an ast.FunctionDef, got {type(func_def).__name__}")
    if not isinstance(config, PipelineConfig):
        raise TypeError(f"transform_pipeline config must be a pl.pipeline.PipelineConfig, got {config!r}")
    del var_types  # the real parser probe's types: not needed here (see the docstring)
    node = _prune_const_ifs(copy.deepcopy(func_def), if_const_map or {})
    names = {**(closure_vars or {}), **(tilingkey_consts or {}), **(datatype_consts or {})}
    gen = transform(node, SourceFile("<pipeline>", 0, 0), Scope({}, names), config)
    out = ast.parse(gen.kernel_text).body[0]
    for n in ast.walk(out):
        if hasattr(n, "lineno") and n.lineno in gen.line_map:
            line, col = gen.line_map[n.lineno]
            n.lineno = n.end_lineno = line
            n.col_offset = n.end_col_offset = col
    return out  # type: ignore[return-value]


def _prune_const_ifs(fdef: ast.FunctionDef, if_const_map: dict) -> ast.FunctionDef:
    """Replace each ``if`` whose test ``if_const_map`` knows as a constant by the branch it takes."""
    if not if_const_map:
        return fdef

    class Prune(ast.NodeTransformer):
        def visit_If(self, node: ast.If):  # noqa: N802 - ast API
            self.generic_visit(node)
            known = if_const_map.get(ast.unparse(node.test))
            if not known or not known[0]:
                return node
            branch = node.body if known[1] else node.orelse
            return branch or ast.Pass()
    return ast.fix_missing_locations(Prune().visit(fdef))
