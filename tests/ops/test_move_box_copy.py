"""Mat -> Left / Right moves of whole boxes in one strided copy (``ops/move.py`` ``BOX_COPY``,
``fractal.box_copier``, issue 15): the same bytes as the gathered copy through a scratch tile. Whole
launches (the example GEMM at K offsets of the L1 tile, fp16 / bf16 / fp32 operands with NaN payloads)
compared with ``BOX_COPY`` on and off: outputs and every report field; and the copy is really taken."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import fractal
from pypto_pro.ops import move

from cube_kernels import matmul_tiles
from fast_switch import count_taken, run_both

T = 64


@pytest.fixture
def copies(monkeypatch):
    """How many moves dispatch a box copy."""
    return count_taken(monkeypatch, move, "box_copier", fractal)


def _both(run, monkeypatch) -> list:
    return run_both(run, monkeypatch, move, "BOX_COPY")


def _specials(x: np.ndarray, rng: np.random.Generator, patterns: list[int], frac: float = 0.03) -> np.ndarray:
    flat = x.reshape(-1).view(np.uint16 if x.itemsize == 2 else np.uint32)
    pick = rng.random(flat.size) < frac
    flat[pick] = np.array(patterns, flat.dtype)[rng.integers(0, len(patterns), int(pick.sum()))]
    return x


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("check", ["raise", "warn"])
def test_gemm_launch_is_the_same(arch, check, monkeypatch, copies):
    """The example GEMM (four K steps moved out of each L1 tile at box-corner offsets, edge tiles whose
    partial boxes keep the scratch path), undeferred (raise) and deferred (warn)."""
    from example_modules import load_example
    mm = load_example("matmul")
    rng = np.random.default_rng(31)
    a = _specials(rng.standard_normal((300, 530)).astype(np.float16), rng, [0x7C01, 0xFE3F, 0x8000, 0x0001])
    b = _specials(rng.standard_normal((530, 260)).astype(np.float16), rng, [0x7D55, 0x7C00, 0x83FF])

    def run():
        c = np.zeros((300, 260), np.float32)
        report = mm.make_matmul(arch).options(check=check)[None, 3](a, b, c)
        return c.tobytes(), dataclasses.asdict(report)
    _both(run, monkeypatch)
    if check == "raise":
        assert copies[0] > 0


@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32], ids=lambda d: d.name)
def test_moves_of_other_dtypes(dt, monkeypatch, copies):
    """bf16 and fp32 boxes (other box widths), NaN payloads in the moved bytes (a byte copy keeps them)."""
    def kernel(a: pl.Tensor[[T, T], dt], b: pl.Tensor[[T, T], dt], out: pl.Tensor[[T, T], pl.DT_FP32]):
        a1, b1, xa, xb, acc = matmul_tiles(T, dt, dt)
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(xa, a1)
            pl.move(xb, b1)
            pl.matmul(acc, xa, xb)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(32)
    nan = [0x7F800001, 0xFFC00123] if dt is pl.DT_FP32 else [0x7F81, 0xFFC1] if dt is pl.DT_BF16 else [0x7C01, 0xFE3F]
    a = _specials(rng.standard_normal((T, T)).astype(dt.np_dtype), rng, nan)
    b = _specials(rng.standard_normal((T, T)).astype(dt.np_dtype), rng, nan)

    def run():
        out = np.zeros((T, T), np.float32)
        report = pl.jit(kernel, auto_mutex=True, arch="a2a3")(a, b, out)
        return out.tobytes(), dataclasses.asdict(report)
    _both(run, monkeypatch)
    assert copies[0] > 0


def test_copier_declines():
    """Not two boxed windows of whole boxes of one box shape and dtype: no copier (the scratch path)."""
    from pypto_pro.language.enums import TensorLayout
    from pypto_pro.language.tile_type import TileType
    raw = np.zeros(1 << 16, np.uint8)
    nz = fractal.tile_view(raw, TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Mat), TensorLayout.NZ)
    other = fractal.tile_view(np.zeros(1 << 16, np.uint8), TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Left),
                              TensorLayout.NZ)
    assert fractal.box_copier(nz, other) is not None
    assert fractal.box_copier(nz, nz) is None                    # the same bytes
    assert fractal.box_copier(nz[:20, :32], other[:20, :32]) is None  # a partial box
    assert fractal.box_copier(np.zeros((32, 32), np.float16), other) is None
    wide = fractal.tile_view(np.zeros(1 << 16, np.uint8), TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Left),
                             TensorLayout.NZ)
    assert fractal.box_copier(nz, wide) is None                  # another dtype
