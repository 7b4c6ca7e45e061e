"""The simulator rule of ``pl.simt.launch`` (declared in ``ops/simt.py``).

At dispatch (program order, on the scalar unit) the launch reads its tiles' slots and valid
shapes and its scalar arguments, and the price pass (``interp.py``, ``mode="price"``) runs the
body without data: that gives its cycles (``cost.py``) and the memory it touches, as the on-chip
and GM checkers see it (the bounding box of the elements read / written per parameter). When the
scheduler starts it, the numerics run for all threads at once (``mode="run"``): reads at start,
writes committed at its end; a cross-thread race is reported with both source lines (``races.py``).
"""
from __future__ import annotations

from typing import Any, Callable

from pypto_pro.backends.sim.kit import Prepared, SimEnv, TileAccess
from pypto_pro.backends.sim.simt.cost import Usage, launch_cycles
from pypto_pro.backends.sim.simt.interp import Interpreter, Memory, Threads
from pypto_pro.backends.sim.simt.races import RaceLog
from pypto_pro.ir.nodes import GMRef, TileRef
from pypto_pro.ir.simt import SimtLaunch


def _where(op: SimtLaunch) -> str:
    loc = op.loc
    return f"{loc.path}:{loc.line}" if loc else "pl.simt.launch"


def sim_rule(op: SimtLaunch, env: SimEnv) -> Callable[..., Prepared]:
    fn = op.function
    assert fn is not None
    model = op.model
    operands = op.operands()
    tile_pos = [i for i, o in enumerate(operands) if isinstance(o, TileRef)]
    gm_pos = [i for i, o in enumerate(operands) if isinstance(o, GMRef)]
    access = {i: TileAccess(env.states[operands[i].buffer.uid]) for i in tile_pos}
    n_gm_args = sum(len(operands[i].offsets) for i in gm_pos)
    n_user = len(op.scalars) - 2  # the frontend appends block_idx and block_num
    warp = int(model.warp_size.value)
    line = int(model.cacheline_bytes.value)
    where = _where(op)
    bound = {prm.index: b for prm, b in zip(fn.params, op.bindings)}

    def dispatch(*args: Any) -> Prepared:
        slots = dict(zip(tile_pos, args[:len(tile_pos)]))
        scalars = args[len(tile_pos) + n_gm_args:]
        block_idx, block_num = int(scalars[n_user]), int(scalars[n_user + 1])
        threads = Threads(op.threads, block_idx, block_num, warp)
        valid: dict[int, tuple[int, int]] = {}
        values: dict[int, Any] = {}
        for prm in fn.params:
            kind, i = bound[prm.index]
            if kind == "scalar":
                values[prm.index] = scalars[i]
            elif i in access:
                r, c = access[i].valid[slots[i]]
                valid[prm.index] = (r, c)
        usage = Usage(line, _aliases(fn, bound, operands, access, slots, env))
        pricer = Interpreter(fn, threads, "price", {}, values, valid, {}, usage.record)
        pricer.run()
        usage.issued = pricer.issued
        cycles, ideal = launch_cycles(model, usage)
        accesses, commits, gm, nbytes = _footprint(op, fn, bound, usage, access, slots, valid)

        def run(defer: bool):
            memories: dict[int, Memory] = {}
            same: dict[tuple, Memory] = {}  # one Memory per tile slot / GM tensor passed (args=(t, t) alias)
            for prm in fn.params:
                kind, i = bound[prm.index]
                if kind != "mem":
                    continue
                key = _memory_key(i, operands, access, slots, env)
                if i in access:
                    base = access[i].views[slots[i]]
                else:
                    base = env.gm.arrays[operands[i].param.index]
                if key not in same:
                    same[key] = Memory(prm, base)
                memories[prm.index] = same[key]
            log = RaceLog()

            def record(prm, offsets, mask, write, stmt) -> None:  # races are per memory, not per name
                log.record(memories[prm.index].param, offsets, mask, write, stmt)
            Interpreter(fn, threads, "run", memories, values, valid, {}, record).run()
            log.check(where)

            def commit() -> None:
                for mem in same.values():
                    mem.commit()
            if not defer:
                commit()
                return None
            return commit
        return Prepared(1, threads.total, True, accesses, gm, nbytes, run, commits,
                        priced=(cycles, ideal, (accesses, commits)))
    return dispatch


def _memory_key(i: int, operands: tuple, access: dict, slots: dict, env: SimEnv) -> tuple:
    """What operand ``i`` is in memory: a tile slot, or a GM tensor (two parameters bound to one)."""
    if i in access:
        return ("tile", operands[i].buffer.uid, slots[i])
    return ("gm", env.gm.objs[operands[i].param.index])


def _aliases(fn, bound: dict, operands: tuple, access: dict, slots: dict, env: SimEnv) -> dict[int, int]:
    """Parameter index -> the first parameter of the launch bound to the same memory."""
    first: dict[tuple, int] = {}
    out: dict[int, int] = {}
    for prm in fn.params:
        kind, i = bound[prm.index]
        if kind == "mem":
            out[prm.index] = first.setdefault(_memory_key(i, operands, access, slots, env), prm.index)
    return out


def _footprint(op: SimtLaunch, fn, bound: dict, usage: Usage, access: dict, slots: dict, valid: dict) -> tuple:
    """(on-chip accesses, on-chip regions written, GM accesses, bytes) of one launch: per parameter
    the bounding box of what its threads read and write (the valid region / whole tensor when the
    addresses depend on loaded data)."""
    operands = op.operands()
    accesses: list = []
    commits: list = []
    gm: list = []
    nbytes = 0
    for prm in fn.params:
        kind, i = bound[prm.index]
        if kind != "mem":
            continue
        for write in (False, True):
            key = (prm.index, write)
            if key not in usage.boxes:
                continue
            box = usage.boxes[key]
            if i in access:
                t = access[i]
                if box is None:
                    rows, cols = valid[prm.index]
                else:
                    rows, cols = box[1][0], box[1][1]
                accesses.append(t.window(slots[i], 0, rows, cols, write))
                if write:
                    commits.append(t.written(slots[i], rows, cols))
                nbytes += rows * cols * t.item
            else:
                param = operands[i].param
                shape = prm.shape
                rect = tuple((0, d) for d in shape) if box is None else tuple(zip(box[0], box[1]))
                gm.append((param.index, param.name, rect, write))
                n = 1
                for lo, hi in rect:
                    n *= hi - lo
                nbytes += n * prm.dtype.itemsize
    return tuple(accesses), tuple(commits), tuple(gm), nbytes
