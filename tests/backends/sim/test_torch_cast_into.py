"""``torch_cast.cast_into`` (``dst[...] = src`` through torch for fp32 <-> fp16 / bf16, NaN lanes by NumPy)
writes the assignment's bytes, and the tile cast fp32 -> fp16 takes it (the other pairs stay NumPy's: as fast).

Inputs carry NaN payloads of both signs (quiet and signalling), signed zeros, subnormals, infinities, the
fp16 overflow threshold and rounding ties; views are strided and permuted, and arrays larger than one torch
call go in chunks."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pypto_pro.backends.sim import numerics, torch_cast, torch_engine

from test_torch_cast import _specials16, _specials32

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)


def _assigned(dst: np.ndarray, src: np.ndarray) -> bytes:
    want = np.full_like(dst, 7)
    with np.errstate(all="ignore"):
        want[...] = src
    return want.tobytes()


def _into(dst: np.ndarray, src: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        return torch_cast.cast_into(dst, src)


@pytest.mark.parametrize("dst", [F16, BF16])
@pytest.mark.parametrize("shape", [(32, 64), (128, 128), (1024, 64)])  # 128 x 128 and 1024 x 64: chunked
def test_narrowing_into_as_assignment(dst, shape):
    x = _specials32(shape[0], shape[0] * shape[1]).reshape(shape)
    out = np.full(shape, 7, dst)
    assert _into(out, x)
    assert out.tobytes() == _assigned(out, x)


@pytest.mark.parametrize("src", [F16, BF16])
def test_widening_into_as_assignment(src, dst=F32):
    x = _specials16(5, 256 * 128, src).reshape(256, 128)
    out = np.full(x.shape, 7, dst)
    assert _into(out, x)
    assert out.tobytes() == _assigned(out, x)


@pytest.mark.parametrize("dst", [F16, BF16])
def test_permuted_and_strided_views(dst):
    """A permuted 4-D view (as a fractal box view) into a contiguous array seen in its shape, and into
    every other column of a wider array (the columns between keep their bytes)."""
    x = _specials32(9, 128 * 128).reshape(8, 16, 8, 16).transpose(0, 2, 1, 3)
    out = np.full(x.size, 7, dst).reshape(x.shape)
    assert _into(out, x)
    assert out.tobytes() == _assigned(out, x)
    wide = np.full((64, 256), 7, dst)
    y = _specials32(10, 64 * 128).reshape(64, 128)
    assert _into(wide[:, ::2], y)
    ref = np.full((64, 256), 7, dst)
    with np.errstate(all="ignore"):
        ref[:, ::2] = y
    assert wide.tobytes() == ref.tobytes()


def test_every_narrow_value_widens_into_fp32():
    for src in (F16, BF16):
        x = np.arange(1 << 16, dtype=np.uint16).view(src).reshape(-1, 128)
        out = np.empty(x.shape, F32)
        assert _into(out, x)
        assert out.tobytes() == _assigned(out, x)


def test_not_taken_outside_its_cases():
    x = np.ones((32, 64), np.float32)
    out = np.full((32, 64), 7, np.float16)
    assert not _into(out[:4], x[:4])  # below MIN_ELEMENTS
    assert not _into(out, x[:, ::-1])  # negative strides
    assert not _into(out[:16], x[:16].reshape(16, 64))  # 1024 elements: too small
    assert not _into(out, x.astype(np.float64))  # fp64 -> fp16: not a pair
    assert not _into(np.zeros((32, 64), np.float64), out)  # fp16 -> fp64: not a pair
    assert not _into(np.zeros((32, 64), np.int16), x)
    assert not _into(np.zeros((64, 32), np.float16), x)  # shapes differ
    assert not _into(np.zeros((1, 65536), np.float16), np.ones((1, 65536), np.float32))  # a row over one call
    ro = x.copy()
    ro.flags.writeable = False
    assert not _into(out, ro)  # torch warns on read-only arrays
    assert (out == 7).all(), "nothing may be written where it is not taken"
    for module, switch in ((torch_cast, "enabled"), (torch_engine, "enabled")):
        setattr(module, switch, False)
        try:
            assert not _into(out, x)
        finally:
            setattr(module, switch, True)


def test_overlapping_arrays_are_not_taken():
    buf = np.ones(64 * 128, np.float32)
    src = buf.reshape(64, 128)
    dst = buf.view(np.float16).reshape(128, 128)[:64]
    assert not _into(dst, src)


@pytest.fixture
def taken(monkeypatch):
    """How often ``cast_into`` wrote through torch."""
    seen = [0]
    real = torch_cast.cast_into

    def counting(dst, src):
        got = real(dst, src)
        seen[0] += got
        return got
    monkeypatch.setattr(torch_cast, "cast_into", counting)
    return seen


@pytest.mark.parametrize("pair", [(F32, F16), (F32, BF16), (F16, F32), (BF16, F32)])
@pytest.mark.parametrize("shape", [(128, 64), (256, 256)])
def test_tile_cast_takes_it_for_fp16_with_the_same_bytes(pair, shape, taken):
    src_dt, dst_dt = pair
    n = shape[0] * shape[1]
    x = (_specials32(3, n) if src_dt == F32 else _specials16(3, n, src_dt)).reshape(shape)
    got = np.full(x.shape, 7, dst_dt)
    numerics.cast(got, x)
    assert taken[0] == (pair == (F32, F16))
    small = x[:32, :64]  # 2048 elements: below numerics._TORCH_CAST_MIN, NumPy's
    numerics.cast(np.empty(small.shape, dst_dt), small)
    assert taken[0] == (pair == (F32, F16))
    torch_cast.enabled = False
    try:
        want = np.full(x.shape, 7, dst_dt)
        numerics.cast(want, x)
    finally:
        torch_cast.enabled = True
    assert got.tobytes() == want.tobytes()
