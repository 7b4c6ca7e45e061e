"""Compiles ``pl.simt``: launches in kernel code, thread queries and SIMT callees in SIMT code.

The real PyPTO Pro's rules (``ir/op/simt_ops.py``, ``language/parser/_call_parser.py``,
``framework/src/interface/ir/op/simt_ops.cpp``):

* ``pl.simt.launch(fn, threads=..., args=(...))`` only inside ``with pl.section_vector():``, never
  nested; ``fn`` is a bare name of a ``@pl.simt.function(max_threads=N)`` (1 <= N <= 2048);
  ``threads`` an int or a tuple of one to three compile-time ints in [1, 2048] whose product is at
  most 2048 and at most N; ``args`` a tuple literal of scalars, GM tensors (static shape, ND) and
  Vec tiles (static 2-D shape, ND), one per parameter.
* ``fn`` is compiled at its first launch with the types of the arguments (annotations are checked
  for compatibility, never applied: an integer parameter takes the argument's integer type), and
  that instance serves every later launch whose arguments are compatible with it.
* A SIMT callee (``@pl.simt.function`` without ``max_threads``) is called from SIMT code with
  positional arguments; it returns None or one scalar and cannot recurse. It is inlined into its
  caller (its parameters take the types of its first call, as the real one-instance function does).
* SIMT code uses scalar arithmetic, ``if`` / loops, element access to its tile and tensor
  parameters, the thread queries and plain helpers; any other ``pl.*`` operation is refused.

The frontend on the launch's arch refuses SIMT where the machine model has no SIMT engine (a2a3).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.frontend.builder import Builder
from pypto_pro.frontend.intrinsics import Args, handler
from pypto_pro.frontend.scalars import is_scalar_value
from pypto_pro.frontend.simt_values import Dim3Value, SimtMemoryValue, SimtScope
from pypto_pro.frontend.values import GroupValue, InlineFunction, TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr, Special, Var, convert
from pypto_pro.ir.nodes import Assign, GMRef, TensorParam
from pypto_pro.ir.simt import DIM3_QUERIES, SimtFunction, SimtLaunch, SimtParam, ThreadQuery
from pypto_pro.language import ops as _ops
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import PipeType, SectionKind
from pypto_pro.language.simt import is_simt_function, simt_max_threads
from pypto_pro.language.types import TensorType, TileAnnotation

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

NOT_SIMT = object()  # route_call: the call is not a SIMT matter
MAX_BOUND = 2048     # the real frontend's range of max_threads and of each launch dimension
_SIMT_OPS = ("range",)  # pl.* names SIMT code may use besides pl.simt.* (pl.range loops)
USAGE = "pl.simt.launch(my_simt_func, threads=256, args=(out, n))"


def in_simt(p: "FunctionParser") -> bool:
    return getattr(p.ctx, "simt", None) is not None


def guard(p: "FunctionParser", node: ast.Call, name: str, shown: str) -> None:
    """Inside SIMT code only ``pl.simt.*`` (and ``pl.range``) compile: the real frontend refuses
    every other operation there."""
    if in_simt(p) and not name.startswith("simt.") and name not in _SIMT_OPS:
        p.fail(node, f"Operation '{name}' ({shown}) is not supported inside a SIMT function: SIMT code takes scalar "
                     "expressions, if / loops, element access tile[i, j] / tensor[i, j], the pl.simt.* thread "
                     "queries and SIMT callees", kind="unsupported")


def route_call(p: "FunctionParser", node: ast.Call, func: Any, args: list, kwargs: dict) -> Any:
    """A call of a ``@pl.simt.function`` (a SIMT callee, from SIMT code only), or of ``pl.min`` /
    ``pl.max`` in SIMT code (refused, as the real frontend refuses them: use ``min`` / ``max``);
    ``NOT_SIMT`` for every other call."""
    try:
        simt = is_simt_function(func)
    except Exception:
        return NOT_SIMT
    if simt:
        return _callee_call(p, node, func, args, kwargs)
    if in_simt(p) and (func is _ops.min or func is _ops.max):
        p.fail(node, f"Operation 'pl.{func.__name__}' is not supported inside a SIMT function (the builtin "
                     f"{func.__name__}(a, b) is)", kind="unsupported")
    return NOT_SIMT


# ---- thread queries ---------------------------------------------------------------------------


def _need_simt(p: "FunctionParser", node: ast.Call, name: str) -> None:
    if not in_simt(p):
        p.fail(node, f"pl.simt.{name}() can only be used inside a SIMT function (move SIMT-context-dependent "
                     "logic into a @pl.simt.function)")


def _dim3(p: "FunctionParser", node: ast.Call, a: Args) -> Dim3Value:
    query = a.name.split(".")[1]
    _need_simt(p, node, query)
    return Dim3Value(query)


for _q in DIM3_QUERIES:
    handler(f"simt.{_q}")(_dim3)


@handler("simt.linear_thread_idx", "simt.warp_size")
def _scalar_query(p: "FunctionParser", node: ast.Call, a: Args) -> ThreadQuery:
    query = a.name.split(".")[1]
    _need_simt(p, node, query)
    return ThreadQuery(query)


# ---- pl.simt.launch ---------------------------------------------------------------------------


@handler("simt.launch")
def launch(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if in_simt(p):
        p.fail(node, "Nested pl.simt.launch() is not supported")
    if p.ctx.section is not SectionKind.VECTOR:
        p.fail(node, "pl.simt.launch() must appear inside 'with pl.section_vector():' (SIMT functions run on "
                     "the Vector cores)")
    model = p.ctx.arch.simt
    if model is None:
        p.fail(node, f"pl.simt.launch() needs the Ascend 950's SIMT engine (arch='a5'); {p.ctx.arch.name} has none")
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
        p.fail(node, f"pl.simt.launch() requires one SIMT function name as its positional argument; use: {USAGE}")
    fn = a["callee"]
    name = node.args[0].id
    if not callable(fn) or not is_simt_function(fn) or simt_max_threads(fn) is None:
        p.fail(node.args[0], f"'{name}' is not a launchable @pl.simt.function", kind="type")
    bound = _max_threads(p, node, fn)
    dims = _threads(p, a, bound, int(model.max_threads.value))
    args_node = a.node("args")
    if not isinstance(args_node, ast.Tuple):
        p.fail(args_node, "pl.simt.launch() args must be a tuple (remember the trailing comma of a one-element tuple)")
    values = list(a["args"])
    nodes = list(args_node.elts)
    actuals = [_launch_arg(p, v, at) for v, at in zip(values, nodes)]
    function = _instantiate(p, node, fn, actuals, nodes, bound)
    memory: list = []
    scalars: list[Expr] = []
    bindings: list[tuple[str, int]] = []
    for kind, operand, _ in actuals:
        if kind == "scalar":
            bindings.append(("scalar", len(scalars)))
            scalars.append(operand)
        else:
            bindings.append(("mem", len(memory)))
            memory.append(operand)
    scalars += [Special("block_idx"), Special("block_num")]  # pl.simt.block_idx / grid_dim, read at run time
    reads, writes = function.accessed()
    to_operand = {k: b[1] for k, b in enumerate(bindings) if b[0] == "mem"}
    op = SimtLaunch("simt_launch", PipeType.V, memory[0] if memory else None, tuple(memory[1:]), tuple(scalars),
                    {"api": "simt.launch", "callee": function.name, "threads": dims}, p.loc(node),
                    function=function, threads=dims, bindings=tuple(bindings),
                    written=tuple(sorted(to_operand[k] for k in writes)),
                    read=tuple(sorted(to_operand[k] for k in reads)), model=model)
    p.ctx.builder.emit(op)


def _max_threads(p: "FunctionParser", node: ast.Call, fn: Callable) -> int:
    bound = simt_max_threads(fn)
    if not isinstance(bound, int) or isinstance(bound, bool):
        p.fail(node, f"max_threads of '{fn.__name__}' must be an integer, got {bound!r}", kind="type")
    if not 1 <= bound <= MAX_BOUND:
        p.fail(node, f"max_threads of '{fn.__name__}' must be in the range [1, {MAX_BOUND}], got {bound}")
    return bound


def _threads(p: "FunctionParser", a: Args, bound: int, limit: int) -> tuple[int, int, int]:
    at = a.node("threads")
    value = a["threads"]
    if isinstance(at, ast.Tuple):
        if not 1 <= len(at.elts) <= 3:
            p.fail(at, "pl.simt.launch() threads tuple must contain one to three dimensions (threads=N, (x, y) or "
                       "(x, y, z))")
        items, nodes = list(value), list(at.elts)
    else:
        items, nodes = [value], [at]
    for v, n in zip(items, nodes):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_BOUND:
            p.fail(n, f"pl.simt.launch() dimensions must be compile-time integers in [1, {MAX_BOUND}], got "
                      f"{p.describe(v)}", kind="type")
    dims = tuple(items) + (1,) * (3 - len(items))
    total = dims[0] * dims[1] * dims[2]
    if total > limit:
        p.fail(at, f"pl.simt.launch() total thread count must not exceed {limit}, got {total}", kind="type")
    if total > bound:
        p.fail(at, f"pl.simt.launch() threads {total} exceed the callee's max_threads {bound}", kind="type")
    return dims  # type: ignore[return-value]


def _launch_arg(p: "FunctionParser", v: Any, at: ast.AST) -> tuple[str, Any, Any]:
    """(kind, operand, type) of one launch argument: a tile, a GM tensor or a scalar."""
    if isinstance(v, GroupValue):
        p.fail(at, f"tile group '{v.buffer.name}' is not a tile; pass one of its tiles "
                   f"({v.buffer.name}.current(), .next() or [i])", kind="type")
    if isinstance(v, TileValue):
        tt = v.ref.tile_type
        name = v.ref.buffer.name
        if tt.target_memory.name != "Vec":
            p.fail(at, f"simt.launch Tile argument must be a Vec-memory Tile; '{name}' is in {tt.target_memory.name}",
                   kind="type")
        if tt.effective_layout(p.ctx.arch.name).name != "ND" or tt.fractal is not None:
            p.fail(at, f"simt.launch Tile argument must be an ND Vec Tile (row-major, no fractal); '{name}' is not",
                   kind="type")
        if tt.dtype.get_bit() < 8:
            p.fail(at, f"simt.launch Tile argument '{name}' has a sub-byte element dtype ({tt.dtype.name})", kind="type")
        return "tile", v.ref, tt
    if isinstance(v, TensorValue):
        param = v.param
        if not isinstance(param, TensorParam) or type(param) is not TensorParam:
            p.fail(at, f"a pl.make_tensor view ('{param.name}') cannot be passed to pl.simt.launch in this release; "
                       "pass the tensor parameter", kind="unsupported")
        t = param.type
        if not all(isinstance(d, int) for d in t.dims):
            p.fail(at, f"simt.launch Tensor argument '{param.name}' must have a static shape, got "
                       f"{list(t.dims)}", kind="type")
        if t.dtype.get_bit() < 8:
            p.fail(at, f"simt.launch Tensor argument '{param.name}' has a sub-byte element dtype ({t.dtype.name})",
                   kind="type")
        return "tensor", GMRef(param, tuple(Const(0) for _ in t.dims)), t
    if is_scalar_value(v):
        e = p.scalar_expr(at, v)
        return "scalar", e, e.dtype
    p.fail(at, f"simt.launch supports only Tile, Tensor, and scalar arguments, got {p.describe(v)}", kind="type")
    raise AssertionError


# ---- instantiation ----------------------------------------------------------------------------


def _shown(actual: tuple[str, Any, Any]) -> str:
    kind, _, t = actual
    if kind == "scalar":
        return f"pl.{t.name}"
    if kind == "tile":
        return f"pl.Tile[{list(t.shape)}, pl.{t.dtype.name}]"
    return f"pl.Tensor[{list(t.dims)}, pl.{t.dtype.name}]"


def _dtypes_compatible(a: DataType, b: DataType) -> bool:
    """The real rule: the same dtype, or both integer-like, or both float-like."""
    return a is b or (a.is_int() and b.is_int()) or (a.is_float() and b.is_float())


def _compatible(ann: Any, actual: tuple[str, Any, Any]) -> bool:
    """An annotation against an argument: same kind and a compatible dtype (shapes are not compared)."""
    kind, _, t = actual
    if isinstance(ann, DataType):
        return kind == "scalar" and _dtypes_compatible(ann, t)
    if isinstance(ann, TileAnnotation):
        return kind == "tile" and _dtypes_compatible(ann.dtype, t.dtype)
    if isinstance(ann, TensorType):
        return kind == "tensor" and isinstance(ann.dtype, DataType) and _dtypes_compatible(ann.dtype, t.dtype)
    return False


def _definition(p: "FunctionParser", node: ast.AST, fn: Callable, role: str) -> InlineFunction:
    from pypto_pro.frontend.calls import inline_from_function
    ifn = inline_from_function(fn, p)
    args = ifn.node.args
    if args.posonlyargs or args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.kw_defaults:
        p.fail(node, f"{role} '{fn.__name__}' only supports required positional parameters")
    return ifn


def _annotation(p: "FunctionParser", ifn: InlineFunction, node: ast.expr | None) -> Any:
    """The value of an annotation in the SIMT function's own scope (None when absent or not evaluable)."""
    if node is None:
        return None
    try:
        return p.eval_in(ifn, node)
    except Exception:
        return None


def _check_args(p: "FunctionParser", ifn: InlineFunction, actuals: list, nodes: list) -> None:
    """Each argument against its parameter's annotation (where there is one)."""
    for prm, actual, at in zip(ifn.node.args.args, actuals, nodes):
        ann = _annotation(p, ifn, prm.annotation)
        if prm.annotation is not None and ann is not None and not _compatible(ann, actual):
            p.fail(at, f"SIMT parameter '{prm.arg}' annotated as {ann!r} but called/returned with {_shown(actual)}",
                   kind="type")


def _instantiate(p: "FunctionParser", node: ast.Call, fn: Callable, actuals: list, nodes: list,
                 bound: int) -> SimtFunction:
    """The SIMT function ``fn`` compiled for these launch arguments (the kernel's one instance of it)."""
    cache: dict = p.ctx.__dict__.setdefault("simt_functions", {})
    known = cache.get(id(fn))
    if known is not None:
        function, types = known
        if len(actuals) != len(function.params):
            p.fail(node, f"SIMT function '{function.name}' expects {len(function.params)} argument(s), got "
                         f"{len(actuals)}", kind="type")
        for prm, actual, at, t in zip(function.params, actuals, nodes, types):
            if not _compatible(t, actual):
                p.fail(at, f"SIMT parameter '{prm.name}' annotated as {t!r} but called/returned with {_shown(actual)}",
                       kind="type")
        return function
    ifn = _definition(p, node, fn, "SIMT function")
    params = ifn.node.args.args
    if len(actuals) != len(params):
        p.fail(node, f"SIMT function '{fn.__name__}' expects {len(params)} argument(s), got {len(actuals)}", kind="type")
    _check_args(p, ifn, actuals, nodes)
    for r in _value_returns(ifn.node):
        _fail_in(p, ifn, r, "@pl.simt.function(max_threads=...) only supports bare return or return None; returning "
                            "values is not supported")
    simt_params = [_param(p, prm.arg, k, actual) for k, (prm, actual) in enumerate(zip(params, actuals))]
    values = [_param_value(sp) for sp in simt_params]
    scope = SimtScope("vf", fn.__name__, [id(fn)])
    body, _ = _compile_body(p, node, ifn, values, scope, fresh=True)
    function = SimtFunction(fn.__name__, simt_params, body, bound, ifn.src.loc(ifn.node))
    cache[id(fn)] = (function, [_type_of(a) for a in actuals])
    return function


def _type_of(actual: tuple[str, Any, Any]) -> Any:
    kind, _, t = actual
    if kind == "scalar":
        return t
    if kind == "tile":
        return TileAnnotation(tuple(t.shape), t.dtype)
    return TensorType(tuple(t.dims), t.dtype)


def _param(p: "FunctionParser", name: str, index: int, actual: tuple[str, Any, Any]) -> SimtParam:
    kind, _, t = actual
    if kind == "scalar":
        return SimtParam(name, "scalar", t, index, var=Var(p.ctx.fresh_name(name), dtype=t))
    if kind == "tile":
        return SimtParam(name, "tile", t.dtype, index, tuple(t.shape))
    return SimtParam(name, "tensor", t.dtype, index, tuple(t.dims))


def _param_value(sp: SimtParam) -> Any:
    return sp.var if sp.kind == "scalar" else SimtMemoryValue(sp)


def _compile_body(p: "FunctionParser", node: ast.Call, ifn: InlineFunction, values: list, scope: SimtScope,
                  fresh: bool) -> tuple[list, Any]:
    """Compile ``ifn``'s body as SIMT code with the inline-helper machinery (returns under run-time
    control flow are lowered the real way): into a fresh statement list (a launched function) or
    where the call stands (a callee); (its statements, its returned value)."""
    ctx = p.ctx
    saved_builder, saved_simt = ctx.builder, getattr(ctx, "simt", None)
    if fresh:
        ctx.builder = Builder()
    ctx.simt = scope
    try:
        result = p.inline_call(node, ifn, values, {})
        return ctx.builder.root, result
    finally:
        ctx.builder, ctx.simt = saved_builder, saved_simt


def _value_returns(fdef: ast.FunctionDef) -> list[ast.Return]:
    """The ``return <value>`` statements of ``fdef`` (not ``return`` / ``return None``), outside nested defs."""
    out: list[ast.Return] = []

    def visit(n: ast.AST) -> None:
        for c in ast.iter_child_nodes(n):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(c, ast.Return) and c.value is not None and not (
                    isinstance(c.value, ast.Constant) and c.value.value is None):
                out.append(c)
            visit(c)
    visit(fdef)
    return out


def _fail_in(p: "FunctionParser", ifn: InlineFunction, node: ast.AST, message: str, kind: str | None = None) -> None:
    """A located error at ``node`` of another function's source (a SIMT function's own lines)."""
    from pypto_pro.frontend.diagnostics import fail
    fail(ifn.src, node, message, kind=kind)


# ---- SIMT callees -----------------------------------------------------------------------------


def _callee_call(p: "FunctionParser", node: ast.Call, fn: Callable, args: list, kwargs: dict) -> Any:
    name = getattr(fn, "__name__", "?")
    if not in_simt(p):
        p.fail(node, f"@pl.simt.function '{name}' must be invoked through pl.simt.launch() (inside "
                     "'with pl.section_vector():')")
    if simt_max_threads(fn) is not None:
        p.fail(node, f"SIMT helper '{name}' must be decorated with @pl.simt.function without max_threads "
                     "(a launchable SIMT function cannot be called from SIMT code)", kind="type")
    if kwargs or node.keywords:
        p.fail(node, "Helper @pl.simt.function calls accept positional arguments only")
    scope: SimtScope = p.ctx.simt
    if id(fn) in scope.stack:
        p.fail(node, f"Recursive helper @pl.simt.function call involving '{name}' is not supported")
    ifn = _definition(p, node, fn, "SIMT function")
    params = ifn.node.args.args
    if len(args) != len(params):
        p.fail(node, f"SIMT callee '{name}' expects {len(params)} argument(s), got {len(args)}", kind="type")
    actuals = [_callee_arg(p, v, at) for v, at in zip(args, node.args)]
    cache: dict = p.ctx.__dict__.setdefault("simt_callees", {})
    known = cache.get(id(fn))
    if known is None:
        _check_args(p, ifn, actuals, list(node.args))
        types = [_type_of(a) for a in actuals]
    else:
        types, _ = known
        for prm, actual, at, t in zip(params, actuals, node.args, types):
            if not _compatible(t, actual):
                p.fail(at, f"SIMT parameter '{prm.arg}' annotated as {t!r} but called/returned with {_shown(actual)}",
                       kind="type")
    values = [_callee_value(p, node, prm.arg, actual, t) for prm, actual, t in zip(params, actuals, types)]
    scope.stack.append(id(fn))
    saved_kind = scope.kind
    scope.kind = "callee"
    try:
        _, result = _compile_body(p, node, ifn, values, scope, fresh=False)
    finally:
        scope.stack.pop()
        scope.kind = saved_kind
    if result is not None and not is_scalar_value(result):
        where = _value_returns(ifn.node)
        _fail_in(p, ifn, where[0] if where else ifn.node,
                 "A helper @pl.simt.function must return None or one scalar value (return tiles and tensors "
                 "through a parameter)", kind="type")
    ret_dtype = known[1] if known is not None else None
    if result is not None:
        e = p.scalar_expr(node, result)
        ann = _annotation(p, ifn, ifn.node.returns)
        if known is None and ifn.node.returns is not None and ann is not None and not (
                isinstance(ann, DataType) and _dtypes_compatible(ann, e.dtype)):
            _fail_in(p, ifn, ifn.node.returns, f"Return '{name}' annotated as {ann!r} but called/returned with "
                                               f"pl.{e.dtype.name}", kind="type")
        if ret_dtype is not None:
            e = convert(e, ret_dtype)
        else:
            ret_dtype = e.dtype
        result = e
    if known is None:
        cache[id(fn)] = (types, ret_dtype)
    return result


def _callee_value(p: "FunctionParser", node: ast.Call, name: str, actual: tuple[str, Any, Any], t: Any) -> Any:
    """What a callee's parameter is bound to: a tile or tensor as it is; a scalar converted to the
    parameter's type (its first call's) and evaluated once, as a C++ argument is."""
    kind, value, _ = actual
    if kind != "scalar":
        return value
    e = convert(value, t) if isinstance(t, DataType) else value
    if isinstance(e, (Var, Const)):
        return e
    var = p.new_var(name, e.dtype)
    p.ctx.builder.emit(Assign(var, e, p.loc(node)))
    return var


def _callee_arg(p: "FunctionParser", v: Any, at: ast.AST) -> tuple[str, Any, Any]:
    if isinstance(v, SimtMemoryValue):
        prm = v.param
        if prm.kind == "tile":
            return "tile", v, TileAnnotation(prm.shape, prm.dtype)
        return "tensor", v, TensorType(prm.shape, prm.dtype)
    if is_scalar_value(v):
        e = p.scalar_expr(at, v)
        return "scalar", e, e.dtype
    p.fail(at, f"a SIMT callee takes scalars, tiles and tensors, got {p.describe(v)}", kind="type")
    raise AssertionError
