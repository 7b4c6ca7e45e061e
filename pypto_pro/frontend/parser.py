"""Python AST -> IR. Parses the kernel's source (never traces it).

Compile-time values (ints, floats, TileTypes, lists, ...) are folded as Python objects; values
known only at run time (shapes of dynamic dims, block ids, loop variables) become IR scalar
expressions. Tile operations become ``TileOp`` statements. Every mistake is a located
``CompileError``.
"""
from __future__ import annotations

import ast
from typing import Any, Callable

from pypto_pro.arch.model import ArchModel
from pypto_pro.errors import CompileError, InternalCompilerError, PyptoError
from pypto_pro.frontend.calls import CallParser
from pypto_pro.frontend.context import KernelContext, _Return
from pypto_pro.frontend.control_flow import ControlFlowParser, HelperReturns, LoopFrame
from pypto_pro.frontend.diagnostics import SourceFile, fail
from pypto_pro.frontend.expressions import ExpressionParser
from pypto_pro.frontend.params import kernel_params
from pypto_pro.frontend.scalar_ops import ScalarOpsParser
from pypto_pro.frontend.scope import Scope, closure_vars
from pypto_pro.frontend.source import parse_function
from pypto_pro.frontend.statements import StatementParser
from pypto_pro.frontend import resources, structs  # noqa: F401  (register their pl.* handlers)
from pypto_pro.frontend import simt as _simt  # noqa: F401  (registers the pl.simt.* handlers)
from pypto_pro.frontend.values import (BoundGroupMethod, FrontendObject, GroupValue, RangeValue, SectionValue,
                                       ShapeValue, TensorValue, TileValue)
from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import KernelIR
from pypto_pro.language.enums import SectionKind


class FunctionParser(StatementParser, ControlFlowParser, ExpressionParser, ScalarOpsParser, CallParser):
    """Compiles one function body (the kernel, or an inlined helper) into the context's builder."""

    def __init__(self, ctx: KernelContext, src: SourceFile, scope: Scope, in_inline: bool = False):
        self.ctx = ctx
        self.src = src
        self.scope = scope
        self.in_inline = in_inline
        self.runtime_blocks: list[str] = []  # enclosing run-time ifs / loops of this body (innermost last)
        self.unmerged: dict[str, str] = {}  # names a run-time if left unusable, with the reason
        self.loops: list[LoopFrame] = []  # enclosing loops of this body (innermost last)
        self.terminated = False  # the current block ended in break / continue / return
        self.helper_ret: HelperReturns | None = None  # an inlined helper's run-time returns

    # ---- diagnostics -----------------------------------------------------------------------

    def fail(self, node: ast.AST | None, message: str, notes: list[str] | tuple = (), kind: str | None = None) -> Any:
        fail(self.src, node, message, notes, kind)

    def loc(self, node: ast.AST | None):
        return self.src.loc(node)

    def py_call(self, node: ast.AST, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """Run user-level Python at compile time; its exceptions become located CompileErrors."""
        try:
            return fn(*args, **kwargs)
        except PyptoError:
            raise
        except RecursionError:
            self.fail(node, "recursion too deep while evaluating this expression at compile time")
        except Exception as exc:  # user code raised: report it at the user's line
            self.fail(node, f"{type(exc).__name__} while evaluating at compile time: {exc}")

    def describe(self, v: Any) -> str:
        if isinstance(v, TileValue):
            return f"tile '{v.ref.buffer.name}'"
        if isinstance(v, GroupValue):
            return f"tile group '{v.buffer.name}'"
        if isinstance(v, TensorValue):
            return f"tensor '{v.param.name}'"
        if isinstance(v, FrontendObject):
            return v.describe()
        if isinstance(v, Expr):
            return "a run-time scalar"
        if isinstance(v, (RangeValue, SectionValue, BoundGroupMethod, ShapeValue)):
            return type(v).__name__.replace("Value", "").lower()
        return f"{type(v).__name__} {v!r}" if len(repr(v)) < 60 else type(v).__name__


def parse_kernel(fn: Callable, arch: ArchModel, constexprs: dict[str, Any] | None = None,
                 fold: dict[str, Any] | None = None, pipeline: Any = None,
                 dtypes: dict[str, Any] | None = None, shapes: dict[str, tuple[int, ...]] | None = None,
                 jit_scope: Any = None) -> KernelIR:
    """Parse ``fn``'s source into a ``KernelIR``. ``constexprs`` gives values of ``pl.Constexpr``
    parameters; ``fold`` adds extra compile-time names (TilingKey fields, ``datatype=`` variables);
    ``dtypes`` binds ``pl.DTypeVar``s; ``shapes`` the launch shapes of tensors with ``pl.STATIC``
    dims or ``...``; ``pipeline`` (a ``PipelineConfig``) first rewrites the kernel's AST with the
    pipeline transform; ``jit_scope`` is where ``@pl.jit`` ran (annotations are evaluated there too)."""
    node, src = parse_function(fn)
    ctx = KernelContext(arch, fn.__name__)
    ctx.dtype_bindings = dict(dtypes or {})
    scope = Scope(fn.__globals__, closure_vars(fn))
    generated = None
    if pipeline is not None:
        from pypto_pro.frontend.pipeline_transform import transform
        generated = transform(node, src, scope, pipeline)
        node = ast.parse(generated.kernel_text).body[0]  # type: ignore[assignment]
        src = SourceFile(src.path, 0, 0, generated.line_map)
    parser = FunctionParser(ctx, src, scope)
    params = kernel_params(parser, fn, node, constexprs or {}, shapes, jit_scope)
    if fold:
        scope.locals.update(fold)
        ctx.consts = dict(fold)  # helpers and vector functions see them too, as the real parser passes them on
    try:
        parser.visit_body(node.body)
    except _Return:
        pass
    except (PyptoError, InternalCompilerError):
        raise
    except RecursionError:
        raise CompileError("kernel nests too deeply to compile", src.loc(node)) from None
    # a kernel without sections is shared by both engines, as the real runtime compiles it (a mixed
    # kernel: the AIC and each AIV of a block run the whole body; passes/split_sections.py)
    sectionless = not ctx.sections_seen
    constants = {k: v for k, v in (constexprs or {}).items()}
    constants.update(fold or {})
    kernel = KernelIR(fn.__name__, params, ctx.builder.root, ctx.buffers, src.path, constants=constants,
                      param_vars=ctx.param_vars, subblocks=2 if SectionKind.CUBE in ctx.sections_seen or sectionless else 1)
    kernel.generated = generated
    return kernel
