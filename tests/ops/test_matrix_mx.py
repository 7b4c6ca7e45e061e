"""The MX Cube path: GM mantissas + E8M0 pair-phase scales -> Mat -> Left/Right + ScaleLeft/ScaleRight ->
pl.matmul_mx / matmul_mx_acc -> Acc -> GM, checked against a float64 reference (a5)."""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import mx
from pypto_pro.errors import CompileError, SimulationError

T, G = 64, 2  # one 64 x 64 x 64 block; K / 32 = 2 scale groups
MS = pl.MemorySpace
E8 = pl.DT_FP8E8M0


def _kernel(dt_a, dt_b, k_blocks=1, sa_addrs=(0x0, 0x100), fp4=False, sa_shape=(T, G)):
    def kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt_a], b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt_b],
               scale_a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, 2], E8],
               scale_b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, 2], E8], out: pl.Tensor[[T, T], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=dt_a, target_memory=MS.Mat, layout=pl.NZ),
                                addrs=0x0, mutex_ids=[0, 1])
        b1 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=dt_b, target_memory=MS.Mat, layout=pl.ZN),
                                addrs=0x10000, mutex_ids=[2, 3])
        sa1 = pl.make_tile_group(type=pl.TileType(shape=[T, G], dtype=E8, target_memory=MS.Mat, layout=pl.ZZ),
                                 addrs=0x20000, mutex_ids=[4, 5])
        sb1 = pl.make_tile_group(type=pl.TileType(shape=[G, T], dtype=E8, target_memory=MS.Mat, layout=pl.NN),
                                 addrs=0x21000, mutex_ids=[6, 7])
        al = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=dt_a, target_memory=MS.Left, layout=pl.NZ),
                                addrs=0x0, mutex_ids=[8, 9])
        br = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=dt_b, target_memory=MS.Right, layout=pl.ZN),
                                addrs=0x0, mutex_ids=[10, 11])
        sal = pl.make_tile_group(type=pl.TileType(shape=list(sa_shape), dtype=E8, target_memory=MS.ScaleLeft),
                                 addrs=list(sa_addrs), mutex_ids=[12, 13])
        sbl = pl.make_tile_group(type=pl.TileType(shape=[G, T], dtype=E8, target_memory=MS.ScaleRight),
                                 addrs=[0x0, 0x100], mutex_ids=[14, 15])
        acc = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_FP32, target_memory=MS.Acc),
                                 addrs=0x0, mutex_ids=[16])
        with pl.section_cube():
            kt = T * k_blocks
            if fp4:
                pl.set_stride(a, [kt, 1])   # packed GM bytes, strides in logical FP4 elements
                pl.set_stride(b, [1, kt])
            c = acc.current()
            for kb in pl.range(0, k_blocks, 1):
                x, y, sx, sy = a1.next(), b1.next(), sa1.next(), sb1.next()
                xl, yr, sxl, syr = al.next(), br.next(), sal.next(), sbl.next()
                if fp4:
                    pl.load(x, a, [0, kb * T // 2])
                    pl.load(y, b, [0, kb * T // 2], order=[1, 0])
                else:
                    pl.load(x, a, [0, kb * T])
                    pl.load(y, b, [0, kb * T], order=[1, 0])
                pl.load(sx, scale_a, [0, kb, 0])
                pl.load(sy, scale_b, [0, kb, 0], order=[1, 0])
                pl.move(xl, x)
                pl.move(yr, y)
                pl.move(sxl, sx)
                pl.move(syr, sy)
                if kb == 0:
                    pl.matmul_mx(c, xl, yr, sxl, syr)
                else:
                    pl.matmul_mx_acc(c, c, xl, yr, sxl, syr)
            pl.store(out, c, [0, 0])
    return pl.jit(kernel, auto_mutex=True, arch="a5")


def _pair_phase(e8: np.ndarray) -> np.ndarray:
    """[rows, groups] E8M0 codes -> the GM layout [rows, groups / 2, 2]."""
    return np.ascontiguousarray(e8.reshape(e8.shape[0], e8.shape[1] // 2, 2))


def _operands(fa, fb, k, rng):
    a = rng.choice([-2.0, -1.0, -0.5, 0.25, 0.5, 1.0, 1.5, 3.0], size=(T, k)).astype(fa)
    b = rng.choice([-2.0, -1.0, -0.5, 0.25, 0.5, 1.0, 1.5, 3.0], size=(T, k)).astype(fb)  # [N, K]
    ea = rng.integers(120, 134, size=(T, k // 32)).astype(np.uint8)
    eb = rng.integers(120, 134, size=(T, k // 32)).astype(np.uint8)  # per [n, group]
    ref = (a.astype(np.float64) * np.repeat(2.0 ** (ea.astype(np.int64) - 127), 32, 1)) @ \
          (b.astype(np.float64) * np.repeat(2.0 ** (eb.astype(np.int64) - 127), 32, 1)).T
    return a, b, ea, eb, ref.astype(np.float32)


@pytest.mark.parametrize("fa,fb", [(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2),
                                   (ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2)])
@pytest.mark.parametrize("k_blocks", [1, 2])
def test_mxfp8_matches_the_dequantised_product(fa, fb, k_blocks):
    dta = pl.DT_FP8E4M3FN if fa is ml_dtypes.float8_e4m3fn else pl.DT_FP8E5M2
    dtb = pl.DT_FP8E4M3FN if fb is ml_dtypes.float8_e4m3fn else pl.DT_FP8E5M2
    k = T * k_blocks
    a, b, ea, eb, ref = _operands(fa, fb, k, np.random.default_rng(k_blocks))
    out = np.zeros((T, T), np.float32)
    report = _kernel(dta, dtb, k_blocks)(a, b, _pair_phase(ea).view(ml_dtypes.float8_e8m0fnu),
                                         _pair_phase(eb).view(ml_dtypes.float8_e8m0fnu), out)
    assert report.faults == []
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_mxfp4_packed_codes_and_logical_strides():
    rng = np.random.default_rng(7)
    ca = rng.integers(0, 16, size=(T, T)).astype(np.uint8)
    cb = rng.integers(0, 16, size=(T, T)).astype(np.uint8)  # [N, K] codes
    ea = rng.integers(125, 130, size=(T, G)).astype(np.uint8)
    eb = rng.integers(125, 130, size=(T, G)).astype(np.uint8)
    pack = lambda c: ((c[:, 0::2] & 0xF) | (c[:, 1::2] << 4)).astype(np.uint8)  # noqa: E731
    va = mx.decode_fp4(ca, "DT_FP4E2M1") * np.repeat(2.0 ** (ea.astype(np.int64) - 127), 32, 1)
    vb = mx.decode_fp4(cb, "DT_FP4E1M2") * np.repeat(2.0 ** (eb.astype(np.int64) - 127), 32, 1)
    out = np.zeros((T, T), np.float32)
    report = _kernel(pl.DT_FP4E2M1, pl.DT_FP4E1M2, fp4=True)(pack(ca), pack(cb), _pair_phase(ea), _pair_phase(eb),
                                                               out)
    assert report.faults == []
    np.testing.assert_allclose(out, (va @ vb.T).astype(np.float32), rtol=1e-6, atol=1e-6)


def test_nan_scale_propagates():
    a, b, ea, eb, _ = _operands(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fn, T, np.random.default_rng(3))
    ea[5, 1] = 0xFF
    out = np.zeros((T, T), np.float32)
    _kernel(pl.DT_FP8E4M3FN, pl.DT_FP8E4M3FN)(a, b, _pair_phase(ea), _pair_phase(eb), out)
    assert np.isnan(out[5]).all() and not np.isnan(np.delete(out, 5, axis=0)).any()


def test_scale_tile_away_from_its_bound_address_is_a_fault():
    a, b, ea, eb, _ = _operands(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fn, T, np.random.default_rng(4))
    out = np.zeros((T, T), np.float32)
    with pytest.raises(SimulationError, match=r"address >> 4"):
        _kernel(pl.DT_FP8E4M3FN, pl.DT_FP8E4M3FN, sa_addrs=(0x40, 0x100))(a, b, _pair_phase(ea), _pair_phase(eb),
                                                                          out)


def test_misuse_is_a_located_compile_error():
    with pytest.raises(CompileError, match="MXFP8 .* or MXFP4 .* not mixed"):
        _kernel(pl.DT_FP8E4M3FN, pl.DT_FP4E2M1).compile()
    with pytest.raises(CompileError, match=r"scale_a must be \[64, 2\]"):
        _kernel(pl.DT_FP8E4M3FN, pl.DT_FP8E4M3FN, sa_shape=(32, G)).compile()


def test_mxfp4_takes_torch_float4_e2m1fn_x2_tensors():
    """A torch.float4_e2m1fn_x2 tensor (two packed FP4 codes a byte) is the same bytes as the uint8 form: the
    real runtime maps no torch dtype to the FP4 types and takes it as-is (ours read it through a uint8 view)."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    rng = np.random.default_rng(11)
    ca, cb = (rng.integers(0, 16, size=(T, T)).astype(np.uint8) for _ in range(2))
    ea, eb = (rng.integers(125, 130, size=(T, G)).astype(np.uint8) for _ in range(2))
    pack = lambda c: ((c[:, 0::2] & 0xF) | (c[:, 1::2] << 4)).astype(np.uint8)  # noqa: E731
    va = mx.decode_fp4(ca, "DT_FP4E2M1") * np.repeat(2.0 ** (ea.astype(np.int64) - 127), 32, 1)
    vb = mx.decode_fp4(cb, "DT_FP4E1M2") * np.repeat(2.0 ** (eb.astype(np.int64) - 127), 32, 1)
    a, b = (torch.from_numpy(pack(c)).view(torch.float4_e2m1fn_x2) for c in (ca, cb))
    out = torch.zeros((T, T), dtype=torch.float32)
    report = _kernel(pl.DT_FP4E2M1, pl.DT_FP4E1M2, fp4=True)(a, b, _pair_phase(ea), _pair_phase(eb), out)
    assert report.faults == []
    np.testing.assert_allclose(out.numpy(), (va @ vb.T).astype(np.float32), rtol=1e-6, atol=1e-6)
