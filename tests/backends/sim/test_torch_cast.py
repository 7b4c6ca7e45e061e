"""``torch_cast.cast`` (fp32 <-> fp16 / bf16 through torch, NaN lanes by NumPy) gives ``astype``'s bytes.

Inputs carry NaN payloads of both signs (quiet and signalling), signed zeros, fp32 and fp16 subnormals,
infinities, the overflow threshold and rounding ties; the batched VF casts of a kernel are compared with
the fast path on and off, and the fast path must really be taken.
"""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim import torch_cast, torch_engine
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, vf_kernel

F32, BF16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
_SPECIAL32 = [0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FA00000, 0x00000000, 0x80000000,
              0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x33800000, 0x33800001, 0x477FF000, 0x477FF001,
              0x477FEFFF, 0x47800000, 0x3F801000, 0x3F803000, 0x3F808000, 0x3F818000, 0xC77FF000, 0x38800000]


def _specials32(seed: int, n: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    bits = g.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    at = g.choice(n, size=n // 3, replace=False)
    bits[at] = g.choice(np.array(_SPECIAL32, np.uint32), size=at.size)
    return bits.view(np.float32)


def _specials16(seed: int, n: int, dt: np.dtype) -> np.ndarray:
    g = np.random.default_rng(seed)
    bits = g.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    bits[:8] = [0x7C01, 0xFE01, 0x7FFF, 0x8001, 0x0000, 0x8000, 0xFF81, 0x7F80]  # NaNs (fp16 / bf16), zeros, infs
    return bits.view(dt)


@pytest.mark.parametrize("dst", [F16, BF16])
@pytest.mark.parametrize("shape,strided", [((32, 64), False), ((128, 64), False), ((64, 128), True)])
def test_narrowing_as_astype(dst, shape, strided):
    x = _specials32(shape[0], shape[0] * shape[1]).reshape(shape)
    if strided:
        x = x[:, ::2]
    with np.errstate(all="ignore"):
        got = torch_cast.cast(x, dst)
        want = x.astype(dst)
    assert got is not None and got.dtype == dst and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("src", [F16, BF16])
def test_widening_as_astype(src):
    x = _specials16(3, 128 * 64, src).reshape(128, 64)
    with np.errstate(all="ignore"):
        got = torch_cast.cast(x, F32)
        want = x.astype(F32)
    assert got is not None and got.tobytes() == want.tobytes()


def test_every_narrow_value_widens_as_astype():
    for src in (F16, BF16):
        x = np.arange(1 << 16, dtype=np.uint16).view(src).reshape(-1, 64)[:512]
        for chunk in (x[:256], x[256:]):
            with np.errstate(all="ignore"):
                assert torch_cast.cast(chunk, F32).tobytes() == chunk.astype(F32).tobytes()


def test_not_taken_outside_its_cases():
    x = np.ones((32, 64), np.float32)
    assert torch_cast.cast(x[:4], F16) is None  # below MIN_ELEMENTS
    assert torch_cast.cast(np.ones((1024, 64), np.float32), F16) is None  # above MAX_ELEMENTS (torch's threads)
    assert torch_cast.cast(x, np.dtype(np.int16)) is None
    assert torch_cast.cast(x.astype(np.float64), F16) is None
    assert torch_cast.cast(x[::-1], F16) is None  # negative strides
    torch_cast.enabled = False
    try:
        assert torch_cast.cast(x, F16) is None
    finally:
        torch_cast.enabled = True
    torch_engine.enabled = False
    try:
        assert torch_cast.cast(x, F16) is None
    finally:
        torch_engine.enabled = True


def test_probe_passes_here_and_guards_a_wrong_engine(monkeypatch):
    for key in ((F32, F16), (F32, BF16), (F16, F32), (BF16, F32)):
        assert torch_cast._probe(torch, *key)

    class Flushing:  # an engine that flushes fp32 subnormals (as a DAZ instruction would): must fail the probe
        def __getattr__(self, name):
            return getattr(torch, name)

        @staticmethod
        def from_numpy(a):
            if a.dtype == np.float32:
                a = np.where(np.abs(a) < np.float32(1.1754944e-38), np.float32(0), a)
            return torch.from_numpy(a)
    assert not torch_cast._probe(Flushing(), F32, BF16)


def cast_body(dt):
    """32 iterations of a load, a narrowing cast (ZERO layout) and a store, then widening the stored
    halves back: two batched vcvt groups of 32 nodes (2048 elements each)."""
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        half = vf.create_mask(pattern=ALL, dtype=dt)
        for i in pl.range(0, 32):
            x = vf.load_align(ta, i * 64)
            h = vf.astype(x, full, layout=pl.CastLayout.ZERO, dtype=dt)
            vf.store_align(to, h, half, i * 128)
            w = vf.astype(h, half, layout=pl.CastLayout.ZERO, dtype=pl.DT_FP32)
            vf.store_align(to, w, full, 32 * 128 + i * 64)
    return body


@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_BF16])
def test_batched_vf_casts_on_and_off(dt, monkeypatch):
    kernel = vf_kernel(cast_body(dt), [(pl.DT_FP32, [32, 64])], (pl.DT_FP32, [96, 64]), dynamic=True)
    a = torch.from_numpy(_specials32(7, 32 * 64).reshape(32, 64).copy())
    taken = []
    real = torch_cast.cast

    def counting(x, d):
        r = real(x, d)
        taken.append(r is not None)
        return r
    monkeypatch.setattr(torch_cast, "cast", counting)
    outs = []
    for on in (True, False):
        torch_cast.enabled = on
        try:
            out = torch.full((96, 64), 3.0)
            report = kernel[None, 1](a, out)
        finally:
            torch_cast.enabled = True
        rep = {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}
        outs.append((out.numpy().tobytes(), rep))
        if on:
            assert taken and all(taken), "the batched casts did not go through torch"
    assert outs[0] == outs[1]
