"""pl.gather (index and compare forms), pl.gatherb, pl.gathermask, pl.scatter and pl.histogram: small
kernels run on the simulator against references written here from the PTO-ISA a5 semantics
(docs/numerics.md), plus their located compile errors and the faults for undefined operands."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.errors_sim import OutOfBoundsError

VEC = pl.MemorySpace.Vec


def tt(shape, dtype, **kw):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=VEC, **kw)


def handoff(set_pipe, wait_pipe):
    """``set_pipe`` hands the tiles to ``wait_pipe``: sync_src + sync_dst of event 0 (inlined into the kernel)."""
    pl.system.sync_src(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=0)
    pl.system.sync_dst(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=0)


# ---- gather, index form -----------------------------------------------------------------------------

@pl.jit
def gather_f16(src: pl.Tensor[[8, 32], pl.DT_FP16], idx: pl.Tensor[[8, 32], pl.DT_INT32],
               out: pl.Tensor[[8, 32], pl.DT_FP16]):
    s = pl.make_tile(tt([8, 32], pl.DT_FP16), addr=0x0000, size=512)
    i = pl.make_tile(tt([8, 32], pl.DT_INT32), addr=0x0400, size=1024)
    t = pl.make_tile(tt([8, 32], pl.DT_INT32), addr=0x0800, size=1024)
    d = pl.make_tile(tt([8, 32], pl.DT_FP16, valid_shape=[-1, -1]), addr=0x0C00, size=512)
    with pl.section_vector():
        pl.load(s, src, [0, 0])
        pl.load(i, idx, [0, 0])
        handoff(pl.PipeType.MTE2, pl.PipeType.V)
        pl.expands(d, 7.0)
        pl.set_validshape(d, [5, 19])
        pl.gather(d, s, i, t)
        pl.set_validshape(d, [8, 32])
        handoff(pl.PipeType.V, pl.PipeType.MTE3)
        pl.store(out, d, [0, 0])


def test_gather_index_form_reads_flat_source_offsets_on_a_partial_region():
    rng = np.random.default_rng(1)
    src = torch.tensor(rng.standard_normal((8, 32)), dtype=torch.float16)
    idx = torch.tensor(rng.integers(0, 256, (8, 32)), dtype=torch.int32)
    out = torch.zeros(8, 32, dtype=torch.float16)
    gather_f16(src, idx, out)
    want = np.full((8, 32), 7.0, np.float16)
    flat = src.numpy().reshape(-1)
    want[:5, :19] = flat[idx.numpy()[:5, :19]]
    np.testing.assert_array_equal(out.numpy(), want)


def test_gather_index_out_of_range_is_a_located_fault():
    src = torch.zeros(8, 32, dtype=torch.float16)
    idx = torch.zeros(8, 32, dtype=torch.int32)
    idx[2, 3] = 256
    with pytest.raises(OutOfBoundsError, match=r"test_scatter_gather.py:\d+: pl.gather: index 256 at \[2, 3\]"):
        gather_f16(src, idx, torch.zeros(8, 32, dtype=torch.float16))


# ---- gather, compare form ---------------------------------------------------------------------------

def make_cmp(dtype, mode, offset, rows=2, cols=64, key_dtype=pl.DT_UINT32):
    item = dtype.itemsize

    @pl.jit
    def kernel(src: pl.Tensor[[rows, cols], dtype], keys: pl.Tensor[[1, 16], key_dtype],
               out: pl.Tensor[[rows, 128], pl.DT_UINT32], cnt: pl.Tensor[[1, 8], pl.DT_UINT32]):
        s = pl.make_tile(tt([rows, cols], dtype), addr=0x0000, size=rows * cols * item)
        k = pl.make_tile(tt([1, 16], key_dtype), addr=0x2000, size=64)
        c = pl.make_tile(tt([1, 8], pl.DT_UINT32), addr=0x2100, size=32)
        t = pl.make_tile(tt([1, 8], pl.DT_UINT32), addr=0x2200, size=32)
        d = pl.make_tile(tt([rows, 128], pl.DT_UINT32), addr=0x3000, size=rows * 512)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(k, keys, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.expands(d, 0)
            pl.expands(c, 0)
            pl.gather(d, s, k, c, t, cmp_mode=mode, offset=offset)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
            pl.store(cnt, c, [0, 0])
    return kernel


def cmp_reference(src: np.ndarray, keys: np.ndarray, mode: int, offset: int):
    """Per row: indices offset + row * ceil(cols / 64) * 64 + col of the hits (compare values as the
    a5 kernel does: f32 rounded to int32 then unsigned, ints unsigned, f16 as float)."""
    rows, cols = src.shape
    span = -(-cols // 64) * 64
    res = []
    for r in range(rows):
        k = int(keys.reshape(-1)[r])
        if src.dtype == np.float32:
            v = [int(np.rint(x)) & 0xFFFFFFFF for x in src[r].astype(np.float64)]
        elif src.dtype == np.float16:
            v = [float(x) for x in src[r]]
            k = float(np.int16(np.uint16(k).view(np.int16)))
        else:
            bits = src.dtype.itemsize * 8
            v = [int(x) & ((1 << bits) - 1) for x in src[r]]
        hit = [c for c in range(cols) if (v[c] > k if mode == 4 else v[c] == k)]
        res.append([offset + r * span + c for c in hit])
    return res


@pytest.mark.parametrize("dtype,mode,offset", [(pl.DT_INT16, 4, 0), (pl.DT_INT16, 0, 5), (pl.DT_FP32, 4, 3),
                                               (pl.DT_FP32, 0, 0), (pl.DT_FP16, 4, 0), (pl.DT_INT32, 0, 100)])
def test_gather_compare_form(dtype, mode, offset):
    np_dt = {pl.DT_INT16: np.int16, pl.DT_FP32: np.float32, pl.DT_FP16: np.float16, pl.DT_INT32: np.int32}[dtype]
    rng = np.random.default_rng(2)
    src = rng.integers(-3, 6, (2, 64)).astype(np_dt)
    if dtype is pl.DT_FP32:
        src = (src + rng.choice([0.0, 0.4, 0.5, 0.6], src.shape)).astype(np.float32)
    keys = np.array([[2, 3] + [0] * 14], np.uint32)
    out = torch.zeros(2, 128, dtype=torch.int32)
    cnt = torch.zeros(1, 8, dtype=torch.int32)
    make_cmp(dtype, mode, offset)(torch.from_numpy(src), torch.from_numpy(keys.view(np.int32)), out, cnt)
    want = cmp_reference(src, keys, mode, offset)
    for r in range(2):
        n = cnt[0, r].item()
        assert n == 4 * len(want[r])
        assert out[r, :n // 4].numpy().astype(np.uint32).tolist() == want[r]


def test_gather_compare_negative_values_compare_unsigned():
    src = np.array([[-1, 1, 2, 3] * 16], np.int16)
    out = torch.zeros(1, 128, dtype=torch.int32)
    cnt = torch.zeros(1, 8, dtype=torch.int32)
    keys = np.array([[2] + [0] * 15], np.uint16)
    make_cmp(pl.DT_INT16, 4, 0, rows=1, key_dtype=pl.DT_UINT16)(
        torch.from_numpy(src), torch.from_numpy(keys.view(np.int16)), out, cnt)
    n = cnt[0, 0].item() // 4
    assert out[0, :n].tolist() == [c for c in range(64) if c % 4 in (0, 3)]  # -1 is 0xFFFF > 2


# ---- gatherb / gathermask / scatter -------------------------------------------------------------------

def make_indexed(op, shape, dtype, idx_shape, idx_dtype, fill=None):
    """``op(d, s, i)`` on whole tiles: ``s`` (``shape``, ``dtype``) and the index tile ``i`` loaded, ``d``
    (like ``s``) first filled with ``fill`` when given, then stored."""
    size, idx_size = shape[0] * shape[1] * dtype.itemsize, idx_shape[0] * idx_shape[1] * idx_dtype.itemsize

    def kernel(src: pl.Tensor[shape, dtype], idx: pl.Tensor[idx_shape, idx_dtype], out: pl.Tensor[shape, dtype]):
        s = pl.make_tile(tt(shape, dtype), addr=0x0000, size=size)
        i = pl.make_tile(tt(idx_shape, idx_dtype), addr=0x0100, size=idx_size)
        d = pl.make_tile(tt(shape, dtype), addr=0x0200, size=size)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            if fill is not None:
                pl.expands(d, fill)
            op(d, s, i)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    kernel.__name__ = f"{op.__name__}_k"
    return pl.jit(kernel)


gatherb_k = make_indexed(pl.gatherb, [4, 32], pl.DT_FP16, [4, 8], pl.DT_UINT32)


def test_gatherb_copies_32_byte_blocks_from_byte_offsets():
    src = torch.arange(128, dtype=torch.float16).reshape(4, 32)
    offs = np.zeros((4, 8), np.uint32)
    offs[:, :2] = np.array([[224, 0], [32, 64], [96, 128], [160, 192]], np.uint32)
    out = torch.zeros(4, 32, dtype=torch.float16)
    gatherb_k(src, torch.from_numpy(offs.view(np.int32)), out)
    flat = src.numpy().reshape(-1)
    for r in range(4):
        for b in range(2):
            o = offs[r, b] // 2
            np.testing.assert_array_equal(out.numpy()[r, 16 * b:16 * b + 16], flat[o:o + 16])



@pl.jit
def gatherb_partial_k(src: pl.Tensor[[4, 32], pl.DT_FP16], idx: pl.Tensor[[4, 8], pl.DT_UINT32],
                      out: pl.Tensor[[4, 32], pl.DT_FP16]):
    s = pl.make_tile(tt([4, 32], pl.DT_FP16), addr=0x0000, size=256)
    i = pl.make_tile(tt([4, 8], pl.DT_UINT32), addr=0x0100, size=128)
    d = pl.make_tile(tt([4, 32], pl.DT_FP16, valid_shape=[3, 24]), addr=0x0200, size=256)
    with pl.section_vector():
        pl.load(s, src, [0, 0])
        pl.load(i, idx, [0, 0])
        handoff(pl.PipeType.MTE2, pl.PipeType.V)
        pl.gatherb(d, s, i)
        handoff(pl.PipeType.V, pl.PipeType.MTE3)
        pl.store(out, d, [0, 0])


def test_gatherb_stores_a_block_cut_by_the_valid_columns_up_to_them():
    # valid [3, 24] fp16: block 1 of each row holds only 8 valid elements; the chip gathers it and its
    # store predicate keeps the first 8 (a5 TGATHERB counts elements), rows past 3 are not touched.
    src = torch.arange(128, dtype=torch.float16).reshape(4, 32)
    offs = np.array([[224, 32, 0, 0, 0, 0, 0, 0], [64, 96, 0, 0, 0, 0, 0, 0], [128, 160, 0, 0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0, 0, 0, 0]], np.uint32)
    out = torch.full((4, 32), -1.0, dtype=torch.float16)
    gatherb_partial_k(src, torch.from_numpy(offs.view(np.int32)), out)
    flat = src.numpy().reshape(-1)
    want = np.full((4, 32), -1.0, np.float16)
    for r in range(3):
        want[r, :16] = flat[offs[r, 0] // 2:offs[r, 0] // 2 + 16]
        want[r, 16:24] = flat[offs[r, 1] // 2:offs[r, 1] // 2 + 8]
    np.testing.assert_array_equal(out.numpy(), want)

def make_mask(mode, cols_out):
    @pl.jit
    def kernel(src: pl.Tensor[[4, 64], pl.DT_INT32], out: pl.Tensor[[4, cols_out], pl.DT_INT32]):
        s = pl.make_tile(tt([4, 64], pl.DT_INT32), addr=0x0000, size=1024)
        d = pl.make_tile(tt([4, cols_out], pl.DT_INT32), addr=0x1000, size=16 * cols_out)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.gathermask(d, s, pattern_mode=mode)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    return kernel


@pytest.mark.parametrize("mode,sel", [(1, slice(0, None, 2)), (2, slice(1, None, 2)), (3, slice(0, None, 4)),
                                      (6, slice(3, None, 4)), (7, slice(None))])
def test_gathermask_patterns(mode, sel):
    src = torch.arange(256, dtype=torch.int32).reshape(4, 64)
    want = src.numpy()[:, sel]
    out = torch.zeros(want.shape, dtype=torch.int32)
    make_mask(mode, want.shape[1])(src, out)
    np.testing.assert_array_equal(out.numpy(), want)


scatter_k = make_indexed(pl.scatter, [4, 16], pl.DT_FP32, [4, 16], pl.DT_INT32, fill=-1.0)


def test_scatter_writes_flat_destination_offsets():
    rng = np.random.default_rng(3)
    src = torch.tensor(rng.standard_normal((4, 16)), dtype=torch.float32)
    perm = rng.permutation(64).reshape(4, 16).astype(np.int32)
    out = torch.zeros(4, 16)
    scatter_k(src, torch.from_numpy(perm), out)
    want = np.zeros(64, np.float32)
    want[perm.reshape(-1)] = src.numpy().reshape(-1)
    np.testing.assert_array_equal(out.numpy().reshape(-1), want)


def test_scatter_write_conflict_is_a_fault():
    idx = torch.arange(64, dtype=torch.int32).reshape(4, 16)
    idx[3, 15] = 0
    with pytest.raises(OutOfBoundsError, match="written twice"):
        scatter_k(torch.zeros(4, 16), idx, torch.zeros(4, 16))


# ---- histogram --------------------------------------------------------------------------------------

def make_hist(src_dtype, is_msb, idx_shape, idx_layout):
    item = src_dtype.itemsize

    @pl.jit
    def kernel(src: pl.Tensor[[32, 64], src_dtype], idx: pl.Tensor[idx_shape, pl.DT_UINT8],
               out: pl.Tensor[[32, 256], pl.DT_UINT32]):
        s = pl.make_tile(tt([32, 64], src_dtype), addr=0x0000, size=32 * 64 * item)
        i = pl.make_tile(tt(idx_shape, pl.DT_UINT8, layout=idx_layout), addr=0x4000, size=256)
        d = pl.make_tile(tt([32, 256], pl.DT_UINT32), addr=0x8000, size=32 * 1024)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.histogram(d, s, i, is_msb=is_msb)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    return kernel


def hist_reference(src, pick):
    out = np.zeros((src.shape[0], 256), np.int64)
    for r, row in enumerate(src):
        for v in row:
            b = pick(r, int(v))
            if b is not None:
                out[r, b] += 1
    return np.cumsum(out, axis=1)


@pytest.mark.parametrize("is_msb", [True, False])
def test_histogram_uint16(is_msb):
    rng = np.random.default_rng(4)
    src = rng.integers(0, 1 << 16, (32, 64)).astype(np.uint16)
    src[:, :8] = (src[:, :8] & 0xFF) | 0x1200  # some rows' filter byte present
    idx = np.full((32, 1), 0x12, np.uint8)
    out = torch.zeros(32, 256, dtype=torch.int32)
    make_hist(pl.DT_UINT16, is_msb, [32, 1], pl.DN)(torch.from_numpy(src), torch.from_numpy(idx), out)
    pick = (lambda r, v: v >> 8) if is_msb else (lambda r, v: v & 0xFF if v >> 8 == 0x12 else None)
    np.testing.assert_array_equal(out.numpy(), hist_reference(src, pick))


def test_histogram_uint32_lsb_filters_by_three_bytes():
    rng = np.random.default_rng(5)
    src = rng.integers(0, 1 << 32, (32, 64), dtype=np.uint64).astype(np.uint32)
    src[:, ::3] = (src[:, ::3] & 0xFF) | 0xA1B2C300
    idx = np.zeros((3, 64), np.uint8)
    idx[:, 0] = [0xA1, 0xB2, 0xC3]
    out = torch.zeros(32, 256, dtype=torch.int32)
    make_hist(pl.DT_UINT32, False, [3, 64], pl.ND)(torch.from_numpy(src.view(np.int32)), torch.from_numpy(idx), out)
    want = hist_reference(src, lambda r, v: v & 0xFF if v >> 8 == 0xA1B2C3 else None)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), want)


# ---- compile errors -----------------------------------------------------------------------------------

def compile_error(fn) -> CompileError:
    with pytest.raises(CompileError) as e:
        pl.jit(fn).compile()
    return e.value


def test_gather_compare_mode_other_than_gt_eq_is_refused():
    def k(src: pl.Tensor[[1, 64], pl.DT_INT16]):
        s = pl.make_tile(tt([1, 64], pl.DT_INT16), addr=0x0000, size=128)
        kk = pl.make_tile(tt([1, 16], pl.DT_UINT16), addr=0x100, size=32)
        c = pl.make_tile(tt([1, 8], pl.DT_UINT32), addr=0x200, size=32)
        t = pl.make_tile(tt([1, 8], pl.DT_UINT32), addr=0x300, size=32)
        d = pl.make_tile(tt([1, 64], pl.DT_UINT32), addr=0x400, size=256)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.gather(d, s, kk, c, t, cmp_mode=2)
    assert "cmp_mode=4 (GT) or 0 (EQ)" in str(compile_error(k))


def index_form_1x64(dtype, cmp_mode=None):
    """The index form of pl.gather on [1, 64] ``dtype`` tiles with 16-bit indices (``cmp_mode=`` when given)."""
    size = 64 * dtype.itemsize
    idx_addr = max(0x100, size)

    def k(src: pl.Tensor[[1, 64], dtype]):
        s = pl.make_tile(tt([1, 64], dtype), addr=0x0000, size=size)
        i = pl.make_tile(tt([1, 64], pl.DT_INT16), addr=idx_addr, size=128)
        t = pl.make_tile(tt([1, 64], pl.DT_INT16), addr=idx_addr + 0x100, size=128)
        d = pl.make_tile(tt([1, 64], dtype), addr=0x400, size=size)
        with pl.section_vector():
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            if cmp_mode is None:
                pl.gather(d, s, i, t)
            else:
                pl.gather(d, s, i, t, cmp_mode=cmp_mode)
    return k


@pytest.mark.parametrize("dtype,cmp_mode,match", [(pl.DT_INT16, 0, "compare form"),
                                                  (pl.DT_INT64, None, "32-bit indices")], ids=["cmp_mode", "b64"])
def test_gather_index_form_refuses_cmp_mode_and_b64_with_16_bit_indices(dtype, cmp_mode, match):
    assert match in str(compile_error(index_form_1x64(dtype, cmp_mode)))


def test_histogram_uint16_needs_a_dn_index_column():
    def k(src: pl.Tensor[[32, 64], pl.DT_UINT16]):
        s = pl.make_tile(tt([32, 64], pl.DT_UINT16), addr=0x0000, size=4096)
        i = pl.make_tile(tt([1, 32], pl.DT_UINT8), addr=0x1000, size=32)
        d = pl.make_tile(tt([32, 256], pl.DT_UINT32), addr=0x2000, size=32768)
        with pl.section_vector():
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.histogram(d, s, i, is_msb=True)
    assert "layout=pl.DN" in str(compile_error(k))


def make_partial_scatter(dtype, idx_dtype, valid):
    """pl.scatter of a [4, 32] src through a [4, 32] index tile whose valid shape is ``valid``, into an
    out pre-filled with 7."""
    idx_type = pl.TileType(shape=[4, 32], dtype=idx_dtype, target_memory=VEC, valid_shape=valid)

    @pl.jit
    def kernel(src: pl.Tensor[[4, 32], dtype], idx: pl.Tensor[[4, 32], idx_dtype], out: pl.Tensor[[4, 32], dtype]):
        s = pl.make_tile(tt([4, 32], dtype), addr=0x0000, size=128 * dtype.itemsize)
        i = pl.make_tile(idx_type, addr=0x1000, size=128 * idx_dtype.itemsize)
        d = pl.make_tile(tt([4, 32], dtype), addr=0x2000, size=128 * dtype.itemsize)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.expands(d, 7)
            pl.scatter(d, s, i)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    return kernel


@pytest.mark.parametrize("dtype,np_dt,idx_dtype,np_idx", [
    (pl.DT_FP32, np.float32, pl.DT_INT32, np.int32), (pl.DT_INT32, np.int32, pl.DT_UINT32, np.uint32),
    (pl.DT_FP16, np.float16, pl.DT_INT16, np.int16), (pl.DT_UINT16, np.uint16, pl.DT_UINT16, np.uint16),
    (pl.DT_INT8, np.int8, pl.DT_INT16, np.int16), (pl.DT_UINT8, np.uint8, pl.DT_UINT16, np.uint16)])
def test_scatter_zeroes_what_it_does_not_write_over_a_partial_index_region(dtype, np_dt, idx_dtype, np_idx):
    # idx valid [2, 24]: 48 elements scattered; the a5 code zeroes out's whole [4, 32] tile first, so
    # every other element is 0 (not the 7 it held)
    rng = np.random.default_rng(21)
    src = rng.integers(1, 100, (4, 32)).astype(np_dt)
    idx = rng.permutation(128).reshape(4, 32).astype(np_idx)
    out = torch.zeros(4, 32, dtype=getattr(torch, np.dtype(np_dt).name))
    make_partial_scatter(dtype, idx_dtype, [2, 24])(torch.from_numpy(src), torch.from_numpy(idx.astype(np_idx)), out)
    want = np.zeros(128, np_dt)
    want[idx[:2, :24].astype(np.int64).reshape(-1)] = src[:2, :24].reshape(-1)
    np.testing.assert_array_equal(out.numpy().reshape(-1), want)


def test_gather_16_bit_indices_are_unsigned():
    # a 64 KiB int8 source gathered with int16 indices: the a5 index register is uint16, so -1 is element
    # 65535 and -256 element 65280 (not an out-of-range index)
    @pl.jit
    def kernel(src: pl.Tensor[[256, 256], pl.DT_INT8], idx: pl.Tensor[[1, 32], pl.DT_INT16],
               out: pl.Tensor[[1, 32], pl.DT_INT8]):
        s = pl.make_tile(tt([256, 256], pl.DT_INT8), addr=0x0000, size=65536)
        i = pl.make_tile(tt([1, 32], pl.DT_INT16), addr=0x10000, size=64)
        t = pl.make_tile(tt([1, 32], pl.DT_INT16), addr=0x10040, size=64)
        d = pl.make_tile(tt([1, 32], pl.DT_INT8), addr=0x10080, size=32)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            pl.gather(d, s, i, t)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    src = (np.arange(65536) % 251 - 125).astype(np.int8).reshape(256, 256)
    idx = np.array([-1, -256, 0, 7] * 8, np.int16).reshape(1, 32)
    out = torch.zeros(1, 32, dtype=torch.int8)
    kernel(torch.from_numpy(src), torch.from_numpy(idx), out)
    np.testing.assert_array_equal(out.numpy()[0], src.reshape(-1)[idx[0].view(np.uint16).astype(np.int64)])


# ---- gathermask, 64-bit data: the a5 Int64GatherPattern path ------------------------------------------

def make_mask64(mode, src_shape, out_shape, valid=None):
    """gathermask of int64 data into ``out`` (passed in filled with -1); ``valid`` = src's valid
    [rows, cols] (whole tile when None)."""
    rows, cols = src_shape

    @pl.jit
    def kernel(src: pl.Tensor[src_shape, pl.DT_INT64], out: pl.Tensor[out_shape, pl.DT_INT64]):
        s = pl.make_tile(tt(src_shape, pl.DT_INT64), addr=0x0000, size=rows * cols * 8)
        d = pl.make_tile(tt(out_shape, pl.DT_INT64), addr=0x4000, size=out_shape[0] * out_shape[1] * 8)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(d, out, [0, 0])  # out arrives filled with -1: the elements not written show
            handoff(pl.PipeType.MTE2, pl.PipeType.V)
            if valid is not None:
                pl.set_validshape(s, valid)
            pl.gathermask(d, s, pattern_mode=mode)
            handoff(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, d, [0, 0])
    return kernel


def a5_b64_reference(src, mode, out_shape, rows, cols):
    """The a5 64-bit pattern gather written out: row r keeps min(cols // period, 64) elements and writes
    them from element r * (out_cols // period); later rows overwrite earlier ones."""
    period, phase = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}[mode]
    flat = np.full(out_shape[0] * out_shape[1], -1, np.int64)
    n, step = min(cols // period, 64), out_shape[1] // period
    for r in range(rows):
        flat[r * step:r * step + n] = [src[r, phase + k * period] for k in range(n)]
    return flat.reshape(out_shape)


def test_gathermask_b64_with_src_shaped_out_packs_rows_like_pto_isa_tests():
    # PTO-ISA's own a5 test (dst tile of src's shape): rows land at out_cols // period = packed
    src = torch.arange(4 * 16, dtype=torch.int64).reshape(4, 16) * 3 - 7
    out = torch.full((4, 16), -1, dtype=torch.int64)
    make_mask64(2, [4, 16], [4, 16])(src, out)
    want = a5_b64_reference(src.numpy(), 2, (4, 16), 4, 16)
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(out.numpy().reshape(-1)[:32], src.numpy()[:, 1::2].reshape(-1))


def test_gathermask_b64_drops_the_short_tail_and_steps_rows_by_out_cols():
    # valid [3, 15], pattern 1 (even columns): the b8-b32 path keeps 8 per row; the a5 b64 path keeps
    # 15 // 2 = 7 and steps rows by 24 // 2 = 12 (PTO-ISA case_int64_dynamic_3x15_static_4x24, pattern 1)
    src = torch.arange(4 * 24, dtype=torch.int64).reshape(4, 24) + (1 << 40)
    out = torch.full((4, 24), -1, dtype=torch.int64)
    make_mask64(1, [4, 24], [4, 24], valid=[3, 15])(src, out)
    want = a5_b64_reference(src.numpy(), 1, (4, 24), 3, 15)
    np.testing.assert_array_equal(out.numpy(), want)
    assert out.numpy().reshape(-1)[7] == -1 and out.numpy().reshape(-1)[12] == src[1, 0]


def test_gathermask_b64_page_shaped_out_overlaps_rows_as_the_a5_code_does():
    # out [R, C/2] as the page prescribes: the a5 code steps rows by (C/2) // 2, so row r+1 overwrites
    # the second half of row r
    src = torch.arange(4 * 32, dtype=torch.int64).reshape(4, 32)
    out = torch.full((4, 16), -1, dtype=torch.int64)
    make_mask64(1, [4, 32], [4, 16])(src, out)
    want = a5_b64_reference(src.numpy(), 1, (4, 16), 4, 32)
    np.testing.assert_array_equal(out.numpy(), want)
    assert out.numpy().reshape(-1)[8] == src[1, 0]


def test_gathermask_b64_keeps_at_most_64_per_row():
    src = torch.arange(2 * 160, dtype=torch.int64).reshape(2, 160)
    out = torch.full((2, 160), -1, dtype=torch.int64)
    make_mask64(7, [2, 160], [2, 160])(src, out)
    want = a5_b64_reference(src.numpy(), 7, (2, 160), 2, 160)
    np.testing.assert_array_equal(out.numpy(), want)
    assert (out.numpy()[:, 64:] == -1).all()


@pytest.mark.parametrize("dtype", [pl.DT_INT8, pl.DT_INT64])
def test_gathermask_a2a3_takes_16_and_32_bit_data_only(dtype):
    n = 64

    @pl.jit(arch="a2a3")
    def k(src: pl.Tensor[[4, n], dtype], out: pl.Tensor[[4, n // 2], dtype]):
        s = pl.make_tile(tt([4, n], dtype), addr=0x0000, size=4 * n * dtype.itemsize)
        d = pl.make_tile(tt([4, n // 2], dtype), addr=0x1000, size=2 * n * dtype.itemsize)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.gathermask(d, s, pattern_mode=1)
            pl.store(out, d, [0, 0])
    with pytest.raises(CompileError, match=r"b16/b32 data for 'src'"):
        k.compile()
