"""Reductions and broadcasts: ``pl.sum``, the reduce forms of ``pl.maximum`` / ``pl.minimum``
(``dim=``), and ``pl.expand_{max,min,mul,sub,div}`` (real pages: ``math_functions/{sum,max,min,
expand_*,argmax,argmin}.md``, ``elementwise/{maximum,minimum}.md``).

The real ``dim`` convention: ``dim=0`` works along the last axis, one value per **row** (a
``[R, 1]`` tile with ``layout=pl.DN``: TROWSUM / TROWMAX / TROWEXPAND*); ``dim=1`` one value per
**column** (``[1, C]``: TCOLSUM / TCOLMAX / TCOLEXPAND*). ``tmp`` is required where the real
signature has it; TROWSUM / TROWMAX / TROWMIN and the column forms neither read nor write it.
``pl.expand_add`` is ours (the real spelling is the pass-through ``row_expand_add``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics, numerics_fused
from pypto_pro.backends.sim.templates import col_reduce, expand, row_reduce
from pypto_pro.frontend.operands import Args, in_section, same_dtype, same_shape, tile_in, want_tile
from pypto_pro.language.dtypes import (ARITH_DTYPES, DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32,
                                       DT_UINT8, DT_UINT16, DT_UINT32)
from pypto_pro.language.enums import MemorySpace, SectionKind
from pypto_pro.ops.cpp import call_cpp
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import binary_check, emit

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "reduction"
VEC = (MemorySpace.Vec,)
FLOATS = (DT_FP16, DT_BF16, DT_FP32)
KINDS = {"sum": "sum", "max": "max", "min": "min"}  # reduction -> numerics name


def _dim(p: "FunctionParser", a: Args) -> int:
    dim = a["dim"]
    if dim not in (0, 1) or isinstance(dim, bool):
        p.fail(a.node("dim"), f"dim must be 0 (one value per row, along the last axis) or 1 (one value per "
                              f"column), got {p.describe(dim)}")
    return dim


def _one_per(p: "FunctionParser", a: Args, name: str, t, src, dim: int, what: str = "value") -> None:
    """``name`` holds one ``what`` per row of ``src`` (dim=0: its rows match) or per column (dim=1: its
    columns match): the result of a reduction (``out``) or the broadcast operand of an expand."""
    tt, st = t.tile_type, src.tile_type
    if name == "out":
        if dim == 0 and tt.rows != st.rows:
            p.fail(a.node(name), f"{a.display}(dim=0) writes one {what} per row: 'out' needs {st.rows} rows ([R, 1], "
                                 f"layout=pl.DN), has {tt.rows}")
        if dim == 1 and tt.cols != st.cols:
            p.fail(a.node(name), f"{a.display}(dim=1) writes one {what} per column: 'out' needs {st.cols} columns "
                                 f"([1, C]), has {tt.cols}")
        return
    if dim == 0 and tt.rows != st.rows:
        p.fail(a.node(name), f"{a.display}(dim=0): '{name}' holds one {what} per row ([{st.rows}, 1], layout=pl.DN), "
                             f"it has {tt.rows} rows")
    if dim == 1 and tt.cols != st.cols:
        p.fail(a.node(name), f"{a.display}(dim=1): '{name}' holds one {what} per column ([1, {st.cols}]), it has "
                             f"{tt.cols} columns")


def reduce_check(kind: str, src_name: str, tmp_name: str):
    """``pl.sum(out, src, tmp, dim=)`` and ``pl.maximum(out, src, tmp, dim=)``."""
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        dim = _dim(p, a)
        out = tile_in(p, a, "out", VEC, ARITH_DTYPES)
        src = tile_in(p, a, src_name, VEC, ARITH_DTYPES)
        tmp = want_tile(p, a, tmp_name)
        same_dtype(p, a, out, "out", src, src_name)
        _one_per(p, a, "out", out, src, dim)
        instr = f"{'row' if dim == 0 else 'col'}_{kind}"
        emit(p, node, a, instr, out, (src, tmp), (), ("out", src_name, tmp_name))
    return check


def _reduce_numerics(kind: str, along_rows: bool):
    name, dim = KINDS[kind], 1 if along_rows else 0  # numerics.reduce: dim=1 folds each row
    return lambda out, x: numerics.reduce(name, out, x, dim)


ROW_CPP = {"sum": "TROWSUM", "max": "TROWMAX", "min": "TROWMIN"}
COL_CPP = {"sum": "TCOLSUM", "max": "TCOLMAX", "min": "TCOLMIN"}
for _kind in KINDS:
    instruction(f"row_{_kind}", FAMILY, row_reduce(_reduce_numerics(_kind, True)), vector("row_reduce", "row_reduce"),
                call_cpp(ROW_CPP[_kind]))
    instruction(f"col_{_kind}", FAMILY, col_reduce(_reduce_numerics(_kind, False)),
                vector("col_reduce_per_row", "col_reduce"),
                call_cpp(COL_CPP[_kind], extra=("false",)) if _kind == "sum" else call_cpp(COL_CPP[_kind], ntiles=2))

declare(FAMILY, "sum", "out, src, tmp, *, dim=0",
        "Sum of ``src``'s valid region: ``dim=0`` per row (``out`` is [R, 1], layout=pl.DN; TROWSUM), "
        "``dim=1`` per column (``out`` is [1, C]; TCOLSUM). ``tmp`` is required by the API; neither form uses it.",
        reduce_check("sum", "src", "tmp"))
declare(FAMILY, "maximum", "out, lhs, rhs, *, dim=None",
        "Elementwise ``out = max(lhs, rhs)`` (``rhs`` a tile: TMAX, or a scalar: TMAXS); with ``dim`` a reduction "
        "``pl.maximum(out, src, tmp, dim=0|1)``: per row (TROWMAX, ``out`` [R, 1] DN) or per column (TCOLMAX).",
        binary_check("maximum", reduce_check("max", "lhs", "rhs")))
declare(FAMILY, "minimum", "out, lhs, rhs, *, dim=None",
        "Elementwise ``out = min(lhs, rhs)`` (TMIN / TMINS); with ``dim`` a reduction per row (TROWMIN) or per "
        "column (TCOLMIN), as ``pl.maximum``.",
        binary_check("minimum", reduce_check("min", "lhs", "rhs")))


# ---- expands: broadcast a per-row or per-column operand ------------------------------------------------

EXPAND = {"expand_add": "add", "expand_sub": "sub", "expand_mul": "mul", "expand_div": "div",
          "expand_max": "maximum", "expand_min": "minimum"}
EXPAND_CPP = {"add": "ADD", "sub": "SUB", "mul": "MUL", "div": "DIV", "maximum": "MAX", "minimum": "MIN"}


def expand_check(api_name: str):
    base = EXPAND[api_name]
    dtypes = FLOATS if base == "div" else ARITH_DTYPES

    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        dim = _dim(p, a)
        out = tile_in(p, a, "out", VEC, dtypes)
        src = tile_in(p, a, "src", VEC, dtypes)
        vec = tile_in(p, a, "scalar", VEC, dtypes)
        same_shape(p, a, out, "out", src, "src")
        same_dtype(p, a, out, "out", src, "src")
        same_dtype(p, a, out, "out", vec, "scalar")
        _one_per(p, a, "scalar", vec, src, dim)
        instr = f"{'row' if dim == 0 else 'col'}_expand_{EXPAND_CPP[base].lower()}"
        emit(p, node, a, instr, out, (src, vec), (), ("out", "src", "scalar"))
    return check


def _expand_numerics(api_name: str, per_row: bool):
    return lambda out, x, v: numerics.expand(api_name, out, x, v, 1 if per_row else 0)


for _api, _base in EXPAND.items():
    _suffix = EXPAND_CPP[_base]
    instruction(f"row_expand_{_suffix.lower()}", FAMILY,
                expand(_expand_numerics(_api, True), per_row=True),
                vector(_base, "row_expand"), call_cpp(f"TROWEXPAND{_suffix}"))
    instruction(f"col_expand_{_suffix.lower()}", FAMILY,
                expand(_expand_numerics(_api, False), per_row=False),
                vector(_base, "col_expand"), call_cpp(f"TCOLEXPAND{_suffix}"))
    declare(FAMILY, _api, "out, src, scalar, *, dim=0",
            f"``out = src {_base} broadcast(scalar)``: ``dim=0`` broadcasts a per-row [R, 1] tile (layout=pl.DN; "
            f"TROWEXPAND{_suffix}), ``dim=1`` a per-column [1, C] tile (TCOLEXPAND{_suffix}).", expand_check(_api))


# ---- argmax / argmin: the index of the first extreme value per row or per column ---------------------

ARG_OUT = (DT_UINT32, DT_INT32)
ARG_ROW_SRC = (DT_FP16, DT_FP32)                                                    # dim=0 (the real page)
ARG_COL_SRC = (DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_FP32, DT_BF16)  # dim=1


def arg_check(kind: str):
    """``pl.argmax(out, src, tmp, *, dim=0)``: ``dim=0`` the column index of each row's extreme
    (TROWARGMAX, ``out`` [R, 1]), ``dim=1`` the row index of each column's (TCOLARGMAX, ``out`` [1, C])."""
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        dim = _dim(p, a)
        out = tile_in(p, a, "out", VEC, ARG_OUT)
        src = tile_in(p, a, "src", VEC, ARG_ROW_SRC if dim == 0 else ARG_COL_SRC,
                      what=f"{a.display}(dim={dim})")
        tmp = tile_in(p, a, "tmp", VEC)
        same_shape(p, a, src, "src", tmp, "tmp")
        same_dtype(p, a, src, "src", tmp, "tmp")
        _one_per(p, a, "out", out, src, dim, "index")
        emit(p, node, a, f"{'row' if dim == 0 else 'col'}_{kind}", out, (src, tmp), (), ("out", "src", "tmp"))
    return check


for _kind in ("argmax", "argmin"):
    instruction(f"row_{_kind}", FAMILY, row_reduce(lambda o, x, k=_kind: numerics_fused.argreduce(k, o, x, True)),
                vector("row_reduce", "row_reduce"), call_cpp(f"TROW{_kind.upper()}"))
    instruction(f"col_{_kind}", FAMILY, col_reduce(lambda o, x, k=_kind: numerics_fused.argreduce(k, o, x, False)),
                vector("col_reduce_per_row", "col_reduce"), call_cpp(f"TCOL{_kind.upper()}"))
    declare(FAMILY, _kind, "out, src, tmp, *, dim=0",
            f"Index of the first {'largest' if _kind == 'argmax' else 'smallest'} element: ``dim=0`` per row (the "
            f"column index; ``out`` [R, 1] INT32/UINT32; TROW{_kind.upper()}), ``dim=1`` per column (the row index; "
            f"``out`` [1, C]; TCOL{_kind.upper()}). ``tmp`` (src's dtype and shape) is required; neither form uses it.",
            arg_check(_kind))


# ---- the backend's per-axis names, which the real parser passes through: pl.row_sum(out, src, tmp), ----
# ---- pl.col_max(...), pl.row_expand_sub(out, src, vec), pl.row_argmax(...): the dim forms above, dim fixed ----


def _fixed_dim(check, dim: int):
    def fixed(p: "FunctionParser", node, a: Args) -> None:
        a.values["dim"] = dim
        return check(p, node, a)
    return fixed


for _axis, _d in (("row", 0), ("col", 1)):
    for _kind in KINDS:
        declare(FAMILY, f"{_axis}_{_kind}", "out, src, tmp",
                f"``pl.{'sum' if _kind == 'sum' else 'maximum' if _kind == 'max' else 'minimum'}(out, src, tmp, "
                f"dim={_d})`` under the backend's name ({(ROW_CPP if _d == 0 else COL_CPP)[_kind]}).",
                _fixed_dim(reduce_check(_kind, "src", "tmp"), _d))
    for _kind in ("argmax", "argmin"):
        declare(FAMILY, f"{_axis}_{_kind}", "out, src, tmp",
                f"``pl.{_kind}(out, src, tmp, dim={_d})`` under the backend's name.", _fixed_dim(arg_check(_kind), _d))
    for _api, _base in EXPAND.items():
        declare(FAMILY, f"{_axis}_{_api}", "out, src, scalar",
                f"``pl.{_api}(out, src, scalar, dim={_d})`` under the backend's name "
                f"(T{_axis.upper()}EXPAND{EXPAND_CPP[_base]}).", _fixed_dim(expand_check(_api), _d))
