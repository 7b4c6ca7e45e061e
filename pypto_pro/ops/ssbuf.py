"""``pl.ssbuf_store(struct_var, offset)`` / ``pl.ssbuf_load(struct_var, offset)`` (real pages
``memory_data_movement/ssbuf_store.md`` / ``ssbuf_load.md``): a named ``pl.struct`` copied, as whole
32-bit words (``sizeof(struct) / 4`` of them), to / from the block's shared scalar buffer SSBUF at a
byte offset, by the scalar pipe S. Cores of one block (the AIC and its AIVs) pass small metadata
through it, ordered by ``set_cross_core`` / ``wait_cross_core`` on S.

The struct's bytes are its C layout (fields in declaration order, each aligned to its size:
``int32_t`` / ``int64_t`` / ``float`` / ``bool``, arrays of them; the size rounded to the largest
alignment), as the real C++ copies them. In the simulator the SSBUF is one byte array per block,
shared by its cores; a load is a scalar read that waits for the block's schedule to reach it
(``backends/sim/live.py``), so it returns what the stores before it in the schedule wrote; the
on-chip checker sees SSBUF accesses like a memory of the block, so a load not ordered after the
store (no cross-core signal) is a race, and a load of bytes no store wrote a never-written read.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pypto_pro.backends.sim.kit import Prepared, fault, scalar_read, write_at_end
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args, want_index
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import TileOp
from pypto_pro.ir.storage import ArrayLoad
from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import SCALAR, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "memory_data_movement"
# struct.md: "SSBUF容量有限（通常256字节）" (SSBUF capacity is limited, usually 256 bytes)
SSBUF_BYTES = 256


class _Space:
    """The SSBUF as a memory of the on-chip checker (keyed by the block, not by a core)."""

    name = "SSBUF"


SSBUF = _Space()


def checker_memory(base: int) -> tuple:
    """The checker's (core, space) of the SSBUF of the block whose first core is ``base``."""
    return (-1 - base, SSBUF)


@api(FAMILY)
def ssbuf_store(struct_var: Any, offset: Any) -> None:
    """Copy a named struct into the block's shared scalar buffer (SSBUF) at byte ``offset`` (S pipe)."""


@api(FAMILY)
def ssbuf_load(struct_var: Any, offset: Any) -> None:
    """Fill a named struct from the block's shared scalar buffer (SSBUF) at byte ``offset`` (S pipe)."""


def _layout(p: "FunctionParser", node, storage) -> tuple[list[tuple], int]:
    """((field array, element or None, byte offset, numpy dtype), ...) and sizeof, in C layout."""
    out, pos, align = [], 0, 1
    for array in storage.fields.values():
        dt = {"float": np.dtype(np.float32), "bool": np.dtype(np.bool_)}.get(
            array.ty, np.dtype(np.int64 if array.cbits == 64 else np.int32))
        pos = -(-pos // dt.itemsize) * dt.itemsize
        align = max(align, dt.itemsize)
        for e in range(array.width or 1):
            out.append((array, e if array.width else None, pos, dt))
            pos += dt.itemsize
    size = -(-pos // align) * align
    if size % 4:
        p.fail(node, f"struct {storage.type_name!r} is {size} bytes; SSBUF copies whole 32-bit words, so its last "
                     f"{size % 4} byte(s) would not be copied: add a field to make it a multiple of 4 bytes")
    return out, size


def _operands(p: "FunctionParser", node, a: Args, what: str, write: bool):
    from pypto_pro.frontend.structs import StructValue
    sv = a["struct_var"]
    if not isinstance(sv, StructValue):
        p.fail(a.node("struct_var"), f"{what} needs a named pl.struct, got {p.describe(sv)}", kind="type")
    if write:
        sv.check_writable(p, a.node("struct_var"))
    off = want_index(p, a.node("offset"), a["offset"], f"{what} offset")
    layout, size = _layout(p, a.node("struct_var"), sv.storage)
    if isinstance(off, int) and not 0 <= off <= SSBUF_BYTES - size:
        p.fail(a.node("offset"), f"{what}: bytes {off}..{off + size} are outside the {SSBUF_BYTES}-byte SSBUF")
    return sv, (off if not isinstance(off, int) else Const(off)), layout, size


@ssbuf_store.check
def _store_check(p: "FunctionParser", node, a: Args) -> None:
    sv, off, layout, size = _operands(p, node, a, "pl.ssbuf_store", False)
    loc = p.loc(node)
    values = tuple(ArrayLoad(arr, sv.slot, None if e is None else Const(e), loc) for arr, e, _, _ in layout)
    p.ctx.builder.emit(TileOp("ssbuf_store", PipeType.S, None, (), (off, *values),
                              {"layout": layout, "size": size, "api": "ssbuf_store"}, loc))


@ssbuf_load.check
def _load_check(p: "FunctionParser", node, a: Args) -> None:
    from pypto_pro.frontend.structs import store
    sv, off, layout, size = _operands(p, node, a, "pl.ssbuf_load", True)
    loc = p.loc(node)
    results = tuple(p.new_var(f"{arr.storage.var}_{arr.field}", arr.dtype) for arr, _, _, _ in layout)
    first = ArrayLoad(layout[0][0], sv.slot, None if layout[0][1] is None else Const(0), loc)
    p.ctx.builder.emit(TileOp("ssbuf_load", PipeType.S, None, (), (off,),
                              {"layout": layout, "size": size, "result": results, "first": first,
                               "api": "ssbuf_load"}, loc))
    for (arr, e, _, _), var in zip(layout, results):
        store(p, node, arr, sv.slot, None if e is None else Const(e), var)


# ---- simulator ------------------------------------------------------------------------------------


def _ssbuf(env) -> tuple[np.ndarray, int]:
    """The block's SSBUF bytes and the core field of its checker key."""
    block = env.block if env.block is not None else {}
    return block.setdefault("ssbuf", np.zeros(SSBUF_BYTES, np.uint8)), checker_memory(block.get("base", 0))[0]


def _access(op: TileOp, core: int, offset: int, write: bool) -> tuple:
    size = op.attrs["size"]
    return ((SSBUF, offset, offset + size, core), write, f"SSBUF bytes {offset}..{offset + size}", 1, size, size)


def _window(op: TileOp, offset: int) -> slice:
    size = op.attrs["size"]
    if not 0 <= offset <= SSBUF_BYTES - size:
        raise fault(op, f"pl.{op.op}: bytes {offset}..{offset + size} are outside the {SSBUF_BYTES}-byte SSBUF",
                    OutOfBoundsError)
    return slice(offset, offset + size)


def _store_sim(op: TileOp, env):
    (buf, core), layout, size = _ssbuf(env), op.attrs["layout"], op.attrs["size"]

    def dispatch(offset: int, *values) -> Prepared:
        where = _window(op, offset)
        packed = np.zeros(size, np.uint8)
        for (_, _, pos, dt), v in zip(layout, values):
            packed[pos:pos + dt.itemsize] = np.frombuffer(np.asarray(v, dt).tobytes(), np.uint8)

        def commit() -> None:
            buf[where] = packed
        return Prepared(1, 1, True, (_access(op, core, offset, True),), (), size, write_at_end(commit),
                        (((core, SSBUF), offset, 1, size, size),))
    return dispatch


def _load_sim(op: TileOp, env):
    (buf, core), layout = _ssbuf(env), op.attrs["layout"]

    def dispatch(offset: int) -> Prepared:
        where = _window(op, offset)

        def read() -> tuple:
            raw = buf[where].tobytes()
            return tuple(np.frombuffer(raw[pos:pos + dt.itemsize], dt)[0].item() for _, _, pos, dt in layout)
        return scalar_read((_access(op, core, offset, False),), (), op.attrs["size"], read)
    return dispatch


def _copy_cpp(op: TileOp, ctx, into_ssbuf: bool) -> list[str]:
    first = op.attrs.get("first") or op.scalars[1]
    struct = f"reinterpret_cast<{'const ' if into_ssbuf else ''}uint32_t*>(&({ctx.cexpr(first)}))"
    ssbuf = f"reinterpret_cast<__ssbuf__ uint32_t*>((uint64_t)({ctx.cexpr(op.scalars[0])}))"
    dst, src = (ssbuf, struct) if into_ssbuf else (struct, ssbuf)
    lines = [f"for (uint32_t ssbuf_i = 0; ssbuf_i < {op.attrs['size'] // 4}; ++ssbuf_i) {{ {dst}[ssbuf_i] = "
             f"{src}[ssbuf_i]; }}"]
    if not into_ssbuf:  # the scalars the following field stores read: the struct's new values
        for (arr, e, _, _), var in zip(op.attrs["layout"], op.attrs["result"]):
            field = ArrayLoad(arr, first.slot, None if e is None else Const(e))
            lines.append(f"{ctx.cexpr(var)} = {ctx.cexpr(field)};")
    return lines


def _params(op: TileOp, arch) -> dict[str, int]:
    return {"bytes": op.attrs["size"]}


instruction("ssbuf_store", FAMILY, _store_sim, SCALAR, lambda op, ctx, arch: _copy_cpp(op, ctx, True),
            pipe=PipeType.S, params=_params)
instruction("ssbuf_load", FAMILY, _load_sim, SCALAR, lambda op, ctx, arch: _copy_cpp(op, ctx, False),
            pipe=PipeType.S, params=_params)
