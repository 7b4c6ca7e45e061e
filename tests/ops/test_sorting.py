"""pl.sort32, pl.mrgsort and pl.mrgsort2 on the simulator against references written here: 8-byte
(value, uint32 index) records, descending, ties by lower index (sort32) or earlier list (merges)."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.errors_sim import OutOfBoundsError, RaceError, UninitializedReadError

VEC = pl.MemorySpace.Vec


def tt(shape, dtype):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=VEC)


def unpack(rec: np.ndarray, np_dt) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of a flat record array of ``np_dt`` elements."""
    per = 8 // np.dtype(np_dt).itemsize
    r = rec.reshape(-1, per)
    return r[:, 0].copy(), r.view(np.uint8).reshape(-1, 8)[:, 4:8].copy().view("<u4").reshape(-1)


def pack(values: np.ndarray, index: np.ndarray, np_dt) -> np.ndarray:
    per = 8 // np.dtype(np_dt).itemsize
    out = np.zeros((values.size, per), np_dt)
    out[:, 0] = values
    out.view(np.uint8).reshape(-1, 8)[:, 4:8] = index.astype("<u4").view(np.uint8).reshape(-1, 4)
    return out.reshape(-1)


def make_sort32(dtype, rows, cols, dst_cols, idx_rows, tmp_cols=0):
    item = dtype.itemsize

    @pl.jit
    def kernel(src: pl.Tensor[[rows, cols], dtype], idx: pl.Tensor[[idx_rows, cols], pl.DT_UINT32],
               out: pl.Tensor[[rows, dst_cols], dtype]):
        s = pl.make_tile(tt([rows, cols], dtype), addr=0x0000, size=rows * cols * item)
        i = pl.make_tile(tt([idx_rows, cols], pl.DT_UINT32), addr=0x2000, size=idx_rows * cols * 4)
        d = pl.make_tile(tt([rows, dst_cols], dtype), addr=0x4000, size=rows * dst_cols * item)
        t = pl.make_tile(tt([1, max(tmp_cols, 32)], dtype), addr=0x8000, size=max(tmp_cols, 32) * item)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            if tmp_cols:
                pl.sort32(d, s, i, t)
            else:
                pl.sort32(d, s, i)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
    return kernel


@pytest.mark.parametrize("dtype,np_dt", [(pl.DT_FP32, np.float32), (pl.DT_FP16, np.float16)])
def test_sort32_sorts_each_group_descending_with_its_index(dtype, np_dt):
    rows, cols = 2, 64
    per = 8 // np.dtype(np_dt).itemsize
    rng = np.random.default_rng(7)
    src = rng.integers(-4, 4, (rows, cols)).astype(np_dt)  # many ties
    idx = rng.permutation(cols).astype(np.uint32).reshape(1, cols)
    out = torch.zeros(rows, cols * per, dtype=getattr(torch, np.dtype(np_dt).name))
    make_sort32(dtype, rows, cols, cols * per, 1)(torch.from_numpy(src), torch.from_numpy(idx.view(np.int32)), out)
    for r in range(rows):
        for g in range(2):
            v, k = src[r, 32 * g:32 * g + 32], idx[0, 32 * g:32 * g + 32]
            order = sorted(range(32), key=lambda j: (-float(v[j]), int(k[j])))
            want = pack(v[order], k[order], np_dt)
            got = out.numpy()[r, 32 * g * per:32 * (g + 1) * per]
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_sort32_tail_group_with_tmp_puts_padding_last():
    rows, cols = 1, 48
    src = np.arange(cols, dtype=np.float32)[::-1].copy() - 10
    idx = np.arange(cols, dtype=np.uint32).reshape(1, cols)
    out = torch.zeros(rows, 128)
    make_sort32(pl.DT_FP32, rows, cols, 128, 1, tmp_cols=64)(
        torch.from_numpy(src.reshape(1, cols)), torch.from_numpy(idx.view(np.int32)), out)
    vals, ind = unpack(out.numpy()[0], np.float32)
    np.testing.assert_array_equal(vals[:32], src[:32])  # first group already descending
    np.testing.assert_array_equal(vals[32:48], src[32:48])
    assert np.isnan(vals[48:64]).all() and ind[32:48].tolist() == list(range(32, 48))


def make_mrgsort(block_len):
    @pl.jit
    def kernel(src: pl.Tensor[[1, 256], pl.DT_FP32], out: pl.Tensor[[1, 256], pl.DT_FP32]):
        s = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0000, size=1024)
        d = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0400, size=1024)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.mrgsort(d, s, block_len=block_len)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
    return kernel


def test_mrgsort_merges_four_sorted_blocks():
    rng = np.random.default_rng(8)
    vals = rng.integers(0, 20, 128).astype(np.float32)
    idx = np.arange(128, dtype=np.uint32)
    for b in range(4):  # 4 blocks of 32 records (64 elements), each descending
        seg = slice(32 * b, 32 * b + 32)
        order = np.argsort(-vals[seg], kind="stable")
        vals[seg], idx[seg] = vals[seg][order], idx[seg][order]
    src = pack(vals, idx, np.float32)
    out = torch.zeros(1, 256)
    make_mrgsort(64)(torch.from_numpy(src.reshape(1, 256)), out)
    v, k = unpack(out.numpy()[0], np.float32)
    order = sorted(range(128), key=lambda j: (-vals[j], j // 32, j))  # ties: the earlier block first
    np.testing.assert_array_equal(v, vals[order])
    np.testing.assert_array_equal(k, idx[order])


def make_mrgsort2(nsrc, exhausted, dst_cols=256, tmp_cols=256, synced=True):
    """Merge ``nsrc`` [1, 64] fp32 lists (32 records each) into a [1, dst_cols] dst pre-filled with -7,
    through a [1, tmp_cols] tmp pre-filled with -3; stores dst to ``out`` and tmp to ``tmp_out``
    (``synced`` False: tmp's store has no V -> MTE3 wait)."""
    @pl.jit
    def kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], b: pl.Tensor[[1, 64], pl.DT_FP32], c: pl.Tensor[[1, 64], pl.DT_FP32],
               out: pl.Tensor[[1, dst_cols], pl.DT_FP32], tmp_out: pl.Tensor[[1, tmp_cols], pl.DT_FP32]):
        s0 = pl.make_tile(tt([1, 64], pl.DT_FP32), addr=0x0000, size=256)
        s1 = pl.make_tile(tt([1, 64], pl.DT_FP32), addr=0x0100, size=256)
        s2 = pl.make_tile(tt([1, 64], pl.DT_FP32), addr=0x0200, size=256)
        d = pl.make_tile(tt([1, dst_cols], pl.DT_FP32), addr=0x0400, size=dst_cols * 4)
        t = pl.make_tile(tt([1, tmp_cols], pl.DT_FP32), addr=0x1000, size=tmp_cols * 4)
        with pl.section_vector():
            pl.load(s0, a, [0, 0])
            pl.load(s1, b, [0, 0])
            pl.load(s2, c, [0, 0])
            pl.expands(d, -7.0)
            pl.expands(t, -3.0)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)  # orders the fills
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            if nsrc == 3:
                pl.mrgsort2(s0, s1, d, t, s2, exhausted=exhausted)
            else:
                pl.mrgsort2(s0, s1, d, t, exhausted=exhausted)
            if synced:
                pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(tmp_out, t, [0, 0])
            if not synced:
                pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
    return kernel


def lists(seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(3):
        v = np.sort(rng.integers(0, 10, 32).astype(np.float32))[::-1].copy()
        out.append((v, np.arange(32, dtype=np.uint32) + 100 * k))
    return out


def run_mrgsort2(ls, nsrc, exhausted, dst_cols=256, tmp_cols=256, synced=True):
    args = [torch.from_numpy(pack(v, k, np.float32).reshape(1, 64)) for v, k in ls]
    args += [torch.zeros(1, 64)] * (3 - len(args))
    out, tmp = torch.zeros(1, dst_cols), torch.zeros(1, tmp_cols)
    make_mrgsort2(nsrc, exhausted, dst_cols, tmp_cols, synced)(*args, out, tmp)
    return out.numpy()[0], tmp.numpy()[0]


@pytest.mark.parametrize("nsrc", [2, 3])
def test_mrgsort2_merges_lists_earliest_list_first_on_ties(nsrc):
    ls = lists(9)[:nsrc]
    out, tmp = run_mrgsort2(lists(9), nsrc, False, dst_cols=64 * nsrc, tmp_cols=64 * nsrc)
    recs = [(float(v[j]), li, j, int(k[j])) for li, (v, k) in enumerate(ls) for j in range(32)]
    recs.sort(key=lambda r: (-r[0], r[1], r[2]))
    v, k = unpack(out, np.float32)
    assert v.tolist() == [r[0] for r in recs] and k.tolist() == [r[3] for r in recs]
    np.testing.assert_array_equal(tmp.view(np.uint32), out.view(np.uint32))  # the merge lands in tmp first


def test_mrgsort2_tmp_receives_every_record_and_dst_copies_its_valid_part():
    # dst [1, 64] (32 records) from 2 x 32 records: tmp (the a5 vmrgsort4 target) holds all 64 merged
    # records, dst only the first 32 (MovUb2Ub of dst's 64 columns)
    ls = lists(11)[:2]
    out, tmp = run_mrgsort2(ls, 2, False, dst_cols=64, tmp_cols=128)
    recs = sorted(((float(v[j]), li, j, int(k[j])) for li, (v, k) in enumerate(ls) for j in range(32)),
                  key=lambda r: (-r[0], r[1], r[2]))
    tv, tk = unpack(tmp, np.float32)
    assert tv.tolist() == [r[0] for r in recs] and tk.tolist() == [r[3] for r in recs]
    np.testing.assert_array_equal(out.view(np.uint32), tmp[:64].view(np.uint32))


def test_mrgsort2_dst_past_the_merged_records_gets_tmps_old_bytes():
    # dst [1, 256] from 2 x 32 records: the copy from tmp brings tmp's bytes past the 128 merged
    # elements (-3 here), not dst's old -7
    out, tmp = run_mrgsort2(lists(9), 2, False)
    assert (out[128:] == -3.0).all() and (tmp[128:] == -3.0).all()
    np.testing.assert_array_equal(out[:128].view(np.uint32), tmp[:128].view(np.uint32))


def test_mrgsort2_exhausted_stops_when_a_list_runs_out():
    ls = lists(10)[:2]
    ls[0] = (np.full(32, 9.0, np.float32), ls[0][1])  # list 0 always wins: it runs out first
    out, tmp = run_mrgsort2(ls, 2, True)
    v, k = unpack(out[:64], np.float32)
    assert k.tolist() == list(range(32)) and (out[64:] == -3.0).all() and (tmp[64:] == -3.0).all()


def test_mrgsort2_tmp_too_small_for_the_merge_is_a_located_fault():
    # 2 x 32 records = 128 elements merged into a 64-column tmp: the chip writes past tmp
    with pytest.raises(OutOfBoundsError, match=r"test_sorting.py:\d+: pl.mrgsort2: the merge writes every list's "
                                               r"records to tmp \(128 elements"):
        run_mrgsort2(lists(9)[:2], 2, False, dst_cols=64, tmp_cols=64)


def test_mrgsort2_tmp_read_without_a_sync_is_a_race():
    # tmp is written by the merge: storing it on MTE3 with no V -> MTE3 wait races with the V write
    with pytest.raises(RaceError, match=r"\bt\b"):
        run_mrgsort2(lists(9)[:2], 2, False, dst_cols=128, tmp_cols=128, synced=False)


def test_mrgsort2_dst_wider_than_the_merge_reads_never_written_tmp_bytes():
    @pl.jit
    def kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], b: pl.Tensor[[1, 64], pl.DT_FP32],
               out: pl.Tensor[[1, 256], pl.DT_FP32]):
        s0 = pl.make_tile(tt([1, 64], pl.DT_FP32), addr=0x0000, size=256)
        s1 = pl.make_tile(tt([1, 64], pl.DT_FP32), addr=0x0100, size=256)
        d = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0400, size=1024)
        t = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x1000, size=1024)
        with pl.section_vector():
            pl.load(s0, a, [0, 0])
            pl.load(s1, b, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.mrgsort2(s0, s1, d, t, exhausted=False)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
    args = [torch.from_numpy(pack(v, k, np.float32).reshape(1, 64)) for v, k in lists(9)[:2]]
    with pytest.raises(UninitializedReadError, match="bytes of t that nothing in this block wrote"):
        kernel(*args, torch.zeros(1, 256))


def test_mrgsort_block_len_must_hold_whole_records():
    def k(src: pl.Tensor[[1, 256], pl.DT_FP32]):
        s = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0000, size=1024)
        d = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0400, size=1024)
        with pl.section_vector():
            pl.mrgsort(d, s, block_len=63)
    with pytest.raises(CompileError, match="whole records"):
        pl.jit(k).compile()


def _mrgsort_over_filled_dst(block_len: int, src_valid_cols: int = 256):
    """A [1, 256] fp32 mrgsort whose ``dst`` is pre-filled with -7 (to see what the op leaves alone),
    from a source whose valid columns are ``src_valid_cols``."""
    src_type = pl.TileType(shape=[1, 256], dtype=pl.DT_FP32, target_memory=VEC, valid_shape=[1, src_valid_cols])

    @pl.jit
    def kernel(src: pl.Tensor[[1, 256], pl.DT_FP32], out: pl.Tensor[[1, 256], pl.DT_FP32]):
        s = pl.make_tile(src_type, addr=0x0000, size=1024)
        d = pl.make_tile(tt([1, 256], pl.DT_FP32), addr=0x0400, size=1024)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.expands(d, -7.0)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.mrgsort(d, s, block_len=block_len)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
    return kernel


def test_mrgsort_leaves_the_tail_past_the_last_group_of_four_blocks_untouched():
    # 1x256 fp32 = 128 records; block_len=48 (24 records): one group of 4 blocks (192 elements), and the
    # chip repeats cols // (4 * block_len) = 1 time, so dst[192:] keeps what it held (here -7), not src.
    kernel = _mrgsort_over_filled_dst(48)
    rng = np.random.default_rng(3)
    vals = rng.integers(0, 9, 128).astype(np.float32)
    idx = np.arange(128, dtype=np.uint32)
    for b in range(4):
        seg = slice(24 * b, 24 * b + 24)
        order = np.argsort(-vals[seg], kind="stable")
        vals[seg], idx[seg] = vals[seg][order], idx[seg][order]
    src = pack(vals, idx, np.float32)
    out = torch.zeros(1, 256)
    kernel(torch.from_numpy(src.reshape(1, 256)), out)
    got = out.numpy()[0]
    v, k = unpack(got[:192], np.float32)
    order = sorted(range(96), key=lambda j: (-vals[j], j // 24, j))
    np.testing.assert_array_equal(v, vals[order])
    np.testing.assert_array_equal(k, idx[order])
    np.testing.assert_array_equal(got[192:], np.full(64, -7.0, np.float32))


@pytest.mark.parametrize("block_len,src_valid_cols", [
    (128, 256),  # fewer than four blocks: nothing is written
    (64, 192),   # src valid [1, 192]: 192 // 256 = 0 repeats (a5 counts src's valid columns), dst untouched
], ids=["fewer_than_four_blocks", "groups_counted_from_src_valid_columns"])
def test_mrgsort_without_a_whole_group_writes_nothing(block_len, src_valid_cols):
    out = torch.zeros(1, 256)
    _mrgsort_over_filled_dst(block_len, src_valid_cols)(torch.arange(256, dtype=torch.float32).reshape(1, 256), out)
    np.testing.assert_array_equal(out.numpy()[0], np.full(256, -7.0, np.float32))


def test_mrgsort_is_priced_by_the_records_it_merges():
    # src valid [1, 256] fp32: block_len 64 merges all 256 elements (1 KiB: 4 x 256-byte repeats of the
    # vmrgsort4 entry, 19.5 cycles each); block_len 48 merges one group of 192 (3 repeats). The
    # expands that pre-fills dst is the same in both.
    busy = {}
    for block_len in (64, 48):
        kernel = _mrgsort_over_filled_dst(block_len)
        kernel(torch.zeros(1, 256), torch.zeros(1, 256))
        busy[block_len] = kernel.last_report.pipe_busy["V"]
    assert busy[64] - busy[48] == pytest.approx(19.5)


def test_mrgsort2_is_priced_by_every_list_record_merged():
    # 2 or 3 lists of 32 fp32 records: 512 / 768 bytes merged, 2 / 3 repeats of 19.5 cycles
    busy = {}
    for nsrc in (2, 3):
        kernel = make_mrgsort2(nsrc, False, dst_cols=64, tmp_cols=192)
        args = [torch.from_numpy(pack(v, k, np.float32).reshape(1, 64)) for v, k in lists(9)]
        kernel(*args, torch.zeros(1, 64), torch.zeros(1, 192))
        busy[nsrc] = kernel.last_report.pipe_busy["V"]
    assert busy[3] - busy[2] == pytest.approx(19.5)


def make_sort32_tmp(dtype, cols, valid, tmp_cols):
    """One row of ``cols`` values (valid ``valid``) sorted with a tmp pre-filled with -5; stores dst and tmp."""
    item = dtype.itemsize
    per = 8 // item
    src_type = pl.TileType(shape=[1, cols], dtype=dtype, target_memory=VEC, valid_shape=[1, valid])

    @pl.jit
    def kernel(src: pl.Tensor[[1, cols], dtype], idx: pl.Tensor[[1, cols], pl.DT_UINT32],
               out: pl.Tensor[[1, cols * per], dtype], tmp_out: pl.Tensor[[1, tmp_cols], dtype]):
        s = pl.make_tile(src_type, addr=0x0000, size=cols * item)
        i = pl.make_tile(tt([1, cols], pl.DT_UINT32), addr=0x4000, size=cols * 4)
        d = pl.make_tile(tt([1, cols * per], dtype), addr=0x8000, size=cols * 8)
        t = pl.make_tile(tt([1, tmp_cols], dtype), addr=0x10000, size=tmp_cols * item)
        with pl.section_vector():
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            pl.expands(d, 0.0)
            pl.expands(t, -5.0)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.sort32(d, s, i, t)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, d, [0, 0])
            pl.store(tmp_out, t, [0, 0])
    return kernel


def _sort32_reference(vals, idx, valid, np_dt):
    """Records of one row: each group of 32 of the valid values descending (ties: lower index), the
    last group padded with -NaN values that sort last."""
    groups = -(-valid // 32)
    v = np.full(groups * 32, 0xFFC00000, np.uint32).view(np.float32)  # -NaN, as the a5 code pads
    v[:valid] = vals[:valid]
    k = np.zeros(groups * 32, np.uint32)
    k[:idx.size] = idx[:groups * 32]
    out = []
    for g in range(groups):
        seg = range(32 * g, 32 * g + 32)
        order = sorted(seg, key=lambda j: (np.isnan(v[j]), -v[j] if not np.isnan(v[j]) else 0, int(k[j])))
        out.append(pack(v[order].astype(np_dt), k[order], np_dt))
    return np.concatenate(out), v


@pytest.mark.parametrize("dtype,np_dt", [(pl.DT_FP32, np.float32), (pl.DT_FP16, np.float16)])
@pytest.mark.parametrize("cols,valid", [(64, 64), (64, 40)], ids=["whole_groups", "tail"])
def test_sort32_with_tmp_partial_rows_and_what_tmp_holds(dtype, np_dt, cols, valid):
    # a row of whole groups is sorted from src: tmp keeps its -5 (PTO-ISA a5: tmp is used only when
    # validCol % 32 != 0); a tail row is copied to tmp and padded there with -NaN
    per = 8 // np.dtype(np_dt).itemsize
    rng = np.random.default_rng(cols + valid)
    vals = rng.integers(-3, 3, cols).astype(np_dt)
    idx = rng.permutation(cols).astype(np.uint32)
    out, tmp = torch.zeros(1, cols * per, dtype=getattr(torch, np.dtype(np_dt).name)), \
        torch.zeros(1, 64, dtype=getattr(torch, np.dtype(np_dt).name))
    make_sort32_tmp(dtype, cols, valid, 64)(torch.from_numpy(vals.reshape(1, cols)),
                                            torch.from_numpy(idx.view(np.int32).reshape(1, cols)), out, tmp)
    want, padded = _sort32_reference(vals.astype(np.float32), idx, valid, np_dt)
    got = out.numpy()[0]
    np.testing.assert_array_equal(unpack(got[:want.size], np_dt)[1], unpack(want, np_dt)[1])
    np.testing.assert_array_equal(unpack(got[:want.size], np_dt)[0], unpack(want, np_dt)[0])
    t = tmp.numpy()[0].astype(np.float32)
    if valid % 32 == 0:
        assert (t == -5.0).all()
    else:
        np.testing.assert_array_equal(t[:valid], vals[:valid].astype(np.float32))
        assert np.isnan(t[valid:64]).all() and np.signbit(t[valid:64]).all()


def test_sort32_long_tail_row_stages_only_its_last_group_in_tmp():
    # fp32 row of 2050 valid values (8200 bytes > PTO-ISA's 8160-byte MAX_UB_TMP): the a5 code sorts the
    # whole groups from src and copies only the 2-value tail group to tmp, so a 32-column tmp is enough
    cols, valid = 2080, 2050
    rng = np.random.default_rng(5)
    vals = rng.standard_normal(cols).astype(np.float32)
    idx = np.arange(cols, dtype=np.uint32)
    out, tmp = torch.zeros(1, cols * 2), torch.zeros(1, 32)
    make_sort32_tmp(pl.DT_FP32, cols, valid, 32)(torch.from_numpy(vals.reshape(1, cols)),
                                                  torch.from_numpy(idx.view(np.int32).reshape(1, cols)), out, tmp)
    want, _ = _sort32_reference(vals, idx, valid, np.float32)
    np.testing.assert_array_equal(out.numpy()[0][:want.size].view(np.uint32), want.view(np.uint32))
    t = tmp.numpy()[0]
    np.testing.assert_array_equal(t[:2], vals[2048:2050])
    assert np.isnan(t[2:]).all()
