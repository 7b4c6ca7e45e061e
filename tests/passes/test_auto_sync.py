"""The auto-sync pass: a5 lock/unlock brackets, a2a3 event pairs with pre-set and drain."""
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.ir.nodes import For, SyncOp, TileOp, walk_stmts
from pypto_pro.language.enums import PipeType, SectionKind
from kernels import add_fn


def _program(fn, arch, **kw):
    return pl.jit(fn, arch=arch, **kw).compile().programs[SectionKind.VECTOR]


def _syncs(program):
    return [s for s in walk_stmts(program.body) if isinstance(s, SyncOp)]


def test_a5_brackets_every_op_on_managed_slots():
    prog = _program(add_fn, "a5")
    body = list(walk_stmts(prog.body))
    for i, s in enumerate(body):
        if isinstance(s, TileOp):
            n = len({t.buffer.uid for t in s.tile_operands()})
            before = [x for x in body[i - n:i] if isinstance(x, SyncOp)]
            after = [x for x in body[i + 1:i + 1 + n] if isinstance(x, SyncOp)]
            assert [x.kind for x in before] == ["lock"] * n and [x.kind for x in after] == ["unlock"] * n
            assert all(x.src is s.pipe for x in before + after)
    assert not any(s.kind in ("set_flag", "wait_flag") for s in _syncs(prog))


def test_a2a3_ring_pattern_is_balanced_and_uses_per_slot_events():
    prog = _program(add_fn, "a2a3")
    syncs = _syncs(prog)
    assert not any(s.kind in ("lock", "unlock") for s in syncs)
    sets = [s for s in syncs if s.kind == "set_flag"]
    waits = [s for s in syncs if s.kind == "wait_flag"]
    # per pipe pair: as many set sites as wait sites, pre-sets matched by drains
    pairs = {(s.src, s.dst) for s in sets}
    assert pairs == {(PipeType.MTE2, PipeType.V), (PipeType.V, PipeType.MTE2), (PipeType.V, PipeType.MTE3),
                     (PipeType.MTE3, PipeType.V)}
    for pair in pairs:
        assert sum((s.src, s.dst) == pair for s in sets) == sum((w.src, w.dst) == pair for w in waits)
    presets = [s for s in sets if s.origin.startswith(("a_db: pre-set", "b_db: pre-set", "c_db: pre-set"))]
    drains = [w for w in waits if "drain" in w.origin]
    assert len(presets) == len(drains) == 6
    # pre-sets sit before the outer loop, drains after it, at section top level
    top = prog.body
    loop_at = next(i for i, s in enumerate(top) if isinstance(s, For))
    assert all(top.index(p) < loop_at for p in presets)
    assert all(top.index(d) > loop_at for d in drains)


def test_a2a3_event_ids_run_out_with_a_clear_error():
    def many(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16], z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]):
        tt = pl.TileType(shape=[16, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
        g1 = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1, 2, 3, 4])
        g2 = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[5, 6, 7, 8, 9])  # 10 MTE2->V ids needed
        with pl.section_vector():
            for i in pl.range(4):
                a = g1.next()
                b = g2.next()
                pl.load_tile(a, x, [i, 0])
                pl.load_tile(b, x, [i, 0])
                pl.add(a, a, b)
                pl.store_tile(z, a, [i, 0])

    with pytest.raises(CompileError, match="event ids for MTE2->V but a2a3 has 8"):
        _program(many, "a2a3")
    _program(many, "a5")  # a5 has 32 buffer ids: fine


def test_a2a3_fallback_ownership_for_conditional_access():
    def cond(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
        tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        g = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1])
        with pl.section_vector():
            for i in pl.range(x.shape[0] // 8):
                t = g[0]
                pl.load_tile(t, x, [i, 0])
                if i % 2 == 0:
                    pl.muls(t, t, 2.0)
                pl.store_tile(z, t, [i, 0])

    prog = _program(cond, "a2a3")
    syncs = _syncs(prog)
    kinds = [(s.kind, s.src, s.dst) for s in syncs]
    assert ("set_flag", PipeType.MTE2, PipeType.V) in kinds and ("wait_flag", PipeType.MTE2, PipeType.V) in kinds
    # every transfer is an adjacent set/wait pair: balanced by construction
    assert sum(k == "set_flag" for k, _, _ in kinds) == sum(k == "wait_flag" for k, _, _ in kinds)
    import numpy as np
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    z = np.zeros_like(x)
    pl.jit(cond, arch="a2a3")(x, z)
    expect = x.copy()
    expect[np.repeat(np.arange(8) % 2 == 0, 8)] *= 2
    assert np.array_equal(z, expect)


def test_manual_mode_inserts_nothing():
    prog = _program(add_fn, "a2a3", auto_mutex=False)
    assert _syncs(prog) == []


def test_dumps_written_for_every_stage(tmp_path):
    k = pl.jit(add_fn, arch="a2a3", build_dir=str(tmp_path))
    k.compile()
    names = sorted(p.name for p in (tmp_path / "add_fn").iterdir())
    assert names == ["00_parse.ir", "01_check_memory.ir", "02_split_sections.vector.ir",
                     "03_pipeline_sync.vector.ir", "04_auto_sync.vector.ir", "05_same_pipe.vector.ir",
                     "06_lower.vector.ir",
                     "lowered.vector.txt", "sim_program.vector.py"]
    lowered = (tmp_path / "add_fn" / "lowered.vector.txt").read_text()
    assert "wait_flag(V, MTE2" in lowered and "<- auto:" in lowered


def test_matmul_acc_on_one_current_slot_locks_it_once():
    """pl.matmul_acc(acc.current(), acc.current(), ...) names one slot twice: one lock, not a double lock
    that would hang the hardware."""
    import numpy as np
    import pypto_pro.language as pl
    T = 64

    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0, mutex_ids=[0])
        b1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x8000, mutex_ids=[1])
        al = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, pl.MemorySpace.Left), addrs=0, mutex_ids=[2])
        br = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, pl.MemorySpace.Right), addrs=0, mutex_ids=[3])
        acc = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0, mutex_ids=[4])
        with pl.section_cube():
            pl.load(a1.current(), a, [0, 0])
            pl.load(b1.current(), b, [0, 0])
            pl.move(al.current(), a1.current())
            pl.move(br.current(), b1.current())
            pl.matmul(acc.current(), al.current(), br.current())
            pl.matmul_acc(acc.current(), acc.current(), al.current(), br.current())
            pl.store(out, acc.current(), [0, 0])
    a = np.ones((T, T), np.float16)
    out = np.zeros((T, T), np.float32)
    report = pl.jit(kernel, auto_mutex=True, arch="a5")(a, a, out)
    assert report.faults == [] and (out == 2 * T).all()
