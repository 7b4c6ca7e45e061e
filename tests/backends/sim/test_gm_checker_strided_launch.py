"""Launches whose ``pl.make_tensor`` views meet (interleaved heads, rewrites, identical and different
bytes from several blocks, reads of another block's rows) with the GM checker's strided entries on
and off (``gm_checker.STRIDED``): the same bytes, report fields (faults and notes in order) and trace."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import gm_checker
from tests.launch_compare import assert_same, capture, specials

TT = pl.TileType(shape=[32, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)


@pl.jit
def heads(a: pl.Tensor[[64, 128], pl.DT_FP16], w: pl.Ptr[pl.DT_UINT8], out: pl.Tensor[[64, 128], pl.DT_FP16],
          k: int):
    fp16 = pl.make_ptr(w, dtype=pl.DT_FP16)
    h0 = pl.make_tensor(fp16, [64, 128], [256, 1])                     # rows 256 elements apart
    h1 = pl.make_tensor(pl.addptr(fp16, 128), [64, 128], [256, 1])     # the other head: interleaved rows
    g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        b = pl.get_block_idx()
        pl.load(t, a, [b * 8, 0])
        if b % 2 == 0:
            pl.store(h0, t, [b * k, 0])
        else:
            pl.store(h1, t, [0, 0])
        pl.store(h0, t, [b * k, 0])     # a rewrite of the window (retires the first when ordered)
        pl.load(t, h1, [k, 0])          # reads rows other blocks write
        pl.store(out, t, [b * 8, 0])


@pytest.mark.parametrize("k,blocks", [(0, 1), (0, 3), (8, 4), (32, 2), (16, 3), (4, 6)])
def test_meeting_views_report_the_same_with_strided_entries(tmp_path, k, blocks):
    rng = np.random.default_rng(k + blocks)
    a = specials((64, 128), rng)
    args = [a, np.zeros(2 * 64 * 256 * 2, np.uint8), np.zeros((64, 128), np.float16), k]
    got = {}
    old = gm_checker.STRIDED
    try:
        for on in (True, False):
            gm_checker.STRIDED = on
            got[on] = capture(heads, args, blocks, tmp_path / str(on), check="warn", catch=True)
    finally:
        gm_checker.STRIDED = old
    fields = assert_same(got[True], got[False], f"{tmp_path.name}/True", f"{tmp_path.name}/False")
    if blocks > 1:
        assert isinstance(fields, str) or fields["faults"] or fields["notes"]
