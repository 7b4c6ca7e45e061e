"""Cross-block write/write overlaps judged by their bytes (backends/sim/same_writes.py): blocks that
store identical bytes to one GM window are deterministic on the chip (a note in the report), blocks
that store different bytes there remain a RaceError — in every check mode, when blocks are
scheduled and when they replay an earlier block's schedule."""
import warnings

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import RaceError
from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, OP, Inst
from pypto_pro.backends.sim.scheduler import Reporter

from cube_kernels import multiply_inserted, pair, synced_product

R, C = 16, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


V, MTE2, MTE3 = pl.PipeType.V, pl.PipeType.MTE2, pl.PipeType.MTE3


@pl.jit(auto_mutex=False)
def every_block_stores(x: F32, z: F32, odd: pl.DT_INT32):
    """Every block computes 2 * x[tile 0] and stores it to z[tile 0]; block ``odd`` (if any) reads
    x[tile 1] instead (same instructions, other GM addresses: it replays block 0's schedule)."""
    a = pl.make_tile(TT, addr=0x0000)
    c = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        row = 0
        if pl.get_block_idx() == odd:
            row = 1
        pl.load_tile(a, x, [row, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=V, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=V, event_id=0)
        pl.muls(c, a, 2.0)
        pl.system.sync_src(set_pipe=V, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=V, wait_pipe=MTE3, event_id=0)
        pl.store_tile(z, c, [0, 0])


def _args():
    x = torch.rand(2 * R, C)
    return x, torch.zeros(R, C)


@pytest.mark.parametrize("check", ["raise", "warn"])
def test_blocks_storing_identical_bytes_are_a_note_not_a_fault(check):
    x, z = _args()
    k = every_block_stores.options(check=check)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fault is issued as a warning either
        k[None, 4](x, z, -1)
    report = k.last_report
    assert torch.equal(z, x[:R] * 2)
    assert report.faults == []
    assert len(report.notes) == 1
    note = report.notes[0]
    assert "write identical bytes to 'z'[0:16, 0:64]" in note and "deterministic on the chip" in note
    assert note.count("store on MTE3") == 2 and "test_same_writes.py" in note
    assert "3 overlapping writes" in note  # blocks 1, 2, 3 each over the earlier ones' window
    assert "notes:" in report.table()


@pytest.mark.parametrize("odd", [1, 3])
def test_blocks_storing_different_bytes_still_race(odd):
    x, z = _args()
    with pytest.raises(RaceError, match=r"(?s)global memory conflict on 'z'\[0:16, 0:64\]: two blocks write the same "
                                        r"bytes.*block \d: store.*block \d: store.*store different bytes \(first at "
                                        r"element \[0, 0\]\)"):
        every_block_stores[None, 4](x, z, odd)


def test_different_bytes_in_warn_mode_are_a_fault():
    x, z = _args()
    k = every_block_stores.options(check="warn")
    with pytest.warns(RuntimeWarning, match="store different bytes"):
        k[None, 4](x, z, 2)
    assert len(k.last_report.faults) >= 1
    assert k.last_report.blocks_scheduled < 4  # the odd block replayed block 0's schedule: checked there too


def test_no_overlap_no_note():
    x = torch.rand(4 * R, C)
    z = torch.zeros(4 * R, C)

    @pl.jit(auto_mutex=False)
    def own_rows(x: F32, z: F32):
        a = pl.make_tile(TT, addr=0x0000)
        with pl.section_vector():
            b = pl.get_block_idx()
            pl.load_tile(a, x, [b, 0])
            pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
            pl.store_tile(z, a, [b, 0])
    own_rows[None, 4](x, z)
    assert torch.equal(z, x) and own_rows.last_report.notes == []


# ---- the checker on hand-made accesses ---------------------------------------------------------


def _inst(name: str) -> Inst:
    inst = Inst(0, 0, OP, 1.0, None, name)
    inst.vc = (1,) + (0,) * (NPIPES - 1)
    return inst


def test_checker_compares_only_the_overlap_and_only_after_the_write_lands():
    gm = np.zeros((4, 8), np.float32)
    reporter = Reporter("warn")
    checker = GlobalChecker(reporter, region=lambda pidx, rect: gm[tuple(slice(a, b) for a, b in rect)])
    gm[0:2, :] = 5.0                                   # block 0 wrote rows 0:2
    checker.access(_inst("w0"), 0, 0, "g", ((0, 2), (0, 8)), True, 0)
    w1 = _inst("w1")
    checker.access(w1, 1, 0, "g", ((1, 3), (0, 8)), True, 0)   # block 1: rows 1:3, overlap row 1
    assert w1 in checker.pending and not reporter.faults     # judged when it lands
    gm[1:3, :] = 5.0
    gm[2, 3] = 7.0                                     # outside the overlap: irrelevant
    checker.landed(w1)
    assert not reporter.faults and len(checker.notes()) == 1 and "'g'[1:2, 0:8]" in checker.notes()[0]
    w2 = _inst("w2")
    checker.access(w2, 2, 0, "g", ((0, 1), (4, 6)), True, 0)
    gm[0, 4] = 5.0
    gm[0, 5] = np.nextafter(np.float32(5.0), np.float32(6.0))  # one ulp off: different bytes
    checker.access(_inst("r"), 2, 0, "g", ((3, 4), (0, 1)), False, 0)
    checker.landed(w2)
    assert len(reporter.faults) == 1 and "first at element [0, 5]" in str(reporter.faults[0])


def test_checker_without_a_region_reports_at_once():
    reporter = Reporter("warn")
    checker = GlobalChecker(reporter)
    checker.access(_inst("w0"), 0, 0, "g", ((0, 2), (0, 8)), True, 0)
    checker.access(_inst("w1"), 1, 0, "g", ((0, 2), (0, 8)), True, 0)
    assert len(reporter.faults) == 1 and not checker.pending


# ---- atomic adds ----------------------------------------------------------------------------------


@pl.jit(auto_mutex=False)
def every_block_adds(x: F32, z: F32, plain: pl.DT_INT32):
    """Every block atomically adds its row tile of x into z[tile 0]; block ``plain`` (if any) stores
    its tile there with a plain write instead."""
    a = pl.make_tile(TT, addr=0x0000)
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load_tile(a, x, [b, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        if b == plain:
            pl.store_tile(z, a, [0, 0])
        else:
            pl.store_tile(z, a, [0, 0], atomic=pl.AtomicType.AtomicAdd)


def test_concurrent_atomic_adds_from_blocks_do_not_conflict():
    x = torch.rand(4 * R, C)
    z = torch.zeros(R, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        every_block_adds[None, 4](x, z, -1)
    torch.testing.assert_close(z, x.reshape(4, R, C).sum(0))
    assert every_block_adds.last_report.faults == [] and every_block_adds.last_report.notes == []


@pytest.mark.parametrize("plain", [0, 2])
def test_a_plain_write_among_atomic_adds_still_races(plain):
    with pytest.raises(RaceError, match="two blocks write the same bytes"):
        every_block_adds[None, 4](torch.rand(4 * R, C), torch.zeros(R, C), plain)


def test_an_atomic_add_does_not_retire_a_plain_write_of_its_block():
    reporter = Reporter("warn")
    checker = GlobalChecker(reporter)
    win = ((0, 2), (0, 8))
    w0, a0 = _inst("w0"), _inst("a0")
    a0.vc = (2,) + (0,) * (NPIPES - 1)            # after w0 on the same queue
    checker.access(w0, 0, 0, "g", win, True, 0)  # block 0: plain init
    checker.access(a0, 0, 0, "g", win, ATOMIC, 0)  # block 0: atomic add over it
    checker.access(_inst("a1"), 1, 0, "g", win, ATOMIC, 0)  # block 1's add may land before the init
    assert len(reporter.faults) == 1 and "w0" in str(reporter.faults[0])


# ---- two cores writing the block's L1 ---------------------------------------------------------------

M, K, N = 32, 64, 32
Mat, Vec, Left, Right, Acc = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)


def _both_cores_insert(per_core: bool):
    """Both Vector cores insert a [M, K] tile into one Mat tile (nothing orders the two inserts); with
    ``per_core`` each inserts its own rows of d (different bytes), else both the same rows."""
    def kernel(d: pl.Tensor[[2 * M, K], pl.DT_FP16], v: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32]):
        p_mat = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat), addr=0x10000)
        with pl.section_vector():
            row = pl.get_subblock_idx() * M if per_core else 0
            t_nd = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Vec), addr=0x0)
            t_nz = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Vec, layout=pl.NZ), addr=0x4000)
            pl.load(t_nd, d, [row, 0])
            pair(MTE2, V)
            pl.move(t_nz, t_nd)
            pair(V, MTE3)
            pl.insert(p_mat, t_nz, [0, 0])
            pl.system.set_cross_core(pipe=MTE3, event_id=1)
        with pl.section_cube():
            multiply_inserted(p_mat, v, out, M, K, N)
    return pl.jit(kernel, arch="a5")


def _mats(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2 * M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16),
            np.zeros((M, N), np.float32))


@pytest.mark.parametrize("check", ["raise", "warn"])
def test_two_cores_inserting_identical_bytes_into_l1_is_a_note(check):
    d, v, out = _mats()
    k = _both_cores_insert(False).options(check=check)
    report = k(d, v, out)
    assert report.faults == []
    np.testing.assert_allclose(out, d[:M].astype(np.float64) @ v.astype(np.float64), rtol=1e-5, atol=1e-4)
    notes = [n for n in report.notes if "two cores write identical bytes to Mat" in n]
    assert len(notes) == 1 and "insert on AIV0.MTE3" in notes[0] and "insert on AIV1.MTE3" in notes[0]


def test_two_cores_inserting_different_bytes_into_l1_still_race():
    d, v, out = _mats()
    with pytest.raises(RaceError, match=r"(?s)data race on Mat bytes .*write / write.*insert on AIV.*insert on AIV.*"
                                        r"store different bytes"):
        _both_cores_insert(True)(d, v, out)


# ---- a store of never-written bytes -----------------------------------------------------------------


@pl.jit(auto_mutex=False)
def store_unwritten(x: F32, z: F32, w: F32):
    """Stores ``a`` (loaded) to z and ``u`` (never written) to w; with ``w`` read back by a muls, the
    never-written read is a compute's."""
    a = pl.make_tile(TT, addr=0x0000)
    u = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        pl.load_tile(a, x, [0, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.store_tile(z, a, [0, 0])
        pl.store_tile(w, u, [0, 0])


@pl.jit(auto_mutex=False)
def compute_unwritten(x: F32, z: F32):
    u = pl.make_tile(TT, addr=0x4000)
    c = pl.make_tile(TT, addr=0x8000)
    with pl.section_vector():
        pl.muls(c, u, 2.0)
        pl.system.sync_src(set_pipe=V, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=V, wait_pipe=MTE3, event_id=0)
        pl.store_tile(z, c, [0, 0])


def test_storing_never_written_bytes_to_gm_is_a_note_and_the_poison_shows():
    x, z = torch.rand(R, C), torch.zeros(R, C)
    w = torch.zeros(R, C)
    report = store_unwritten[None, 1](x, z, w)
    assert report.faults == [] and torch.equal(z, x) and torch.isnan(w).all()
    assert len(report.notes) == 1 and "store on MTE3" in report.notes[0] and "stores them to GM" in report.notes[0]


def test_a_compute_reading_never_written_bytes_is_still_a_fault():
    from pypto_pro import UninitializedReadError
    with pytest.raises(UninitializedReadError, match="muls on V"):
        compute_unwritten[None, 1](torch.rand(R, C), torch.zeros(R, C))


def test_both_vector_cores_read_modify_writing_one_gm_window_still_race():
    """Both Vector cores of a mixed block run section_vector (KERNEL_TYPE_MIX_AIC_1_2): each loads a
    GM window, adds to it and stores it back with nothing ordering one core's store after the other's
    load. If AIV0's store lands first, AIV1 adds twice: a real race, even though both stores would
    carry identical bytes when the loads win (the real control_flow/test_with kernels do this)."""
    def kernel(x: pl.Tensor[[M, K], pl.DT_FP16], v: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32]):
        with pl.section_cube():
            acc = synced_product(x, v, M, K, N)
            pl.store(out, acc, [0, 0])
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
        with pl.section_vector():
            t = pl.make_tile(pl.TileType([M, N], pl.DT_FP32, Vec), addr=0x0)
            pl.system.wait_cross_core(pipe=MTE2, event_id=0)
            pl.load(t, out, [0, 0])
            pair(MTE2, V)
            pl.adds(t, t, 1.0)
            pair(V, MTE3)
            pl.store(out, t, [0, 0])
    d, v, out = _mats()
    with pytest.raises(RaceError, match=r"(?s)data race on global 'out'.*load on AIV.\.MTE2.*store on AIV.\.MTE3"):
        pl.jit(kernel, arch="a5")(d[:M], v, out)
