"""The fixpipe's per-channel quantisation: ``scale=<Scaling tile>`` on pl.store / pl.store_tile / pl.move
(one 64-bit quant word per output column, its scale read as M1), and the real checks of the tile."""
import struct

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import fixpipe
from pypto_pro.errors import CompileError, ParserSyntaxError, SimulationError

T = 64
Mat, Left, Right, Acc, Vec, Scaling = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                                       pl.MemorySpace.Acc, pl.MemorySpace.Vec, pl.MemorySpace.Scaling)
SIGNED = 1 << 46


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def words(scales, signed=True) -> np.ndarray:
    return np.array([[(SIGNED if signed else 0) | bits(s) for s in scales]], np.int64)


def m1(x: float) -> np.float32:
    """The scale a vector mode reads: the fp32 with its low 13 bits dropped."""
    return np.array([bits(x) & 0xFFFFE000], np.uint32).view(np.float32)[0]


def test_vector_mode_reads_m1_and_scalar_mode_all_32_bits():
    x = 0.1  # 0x3DCCCCCD: the low 13 bits are not zero
    assert fixpipe.scale_of(bits(x), vector=False) == np.float32(x)
    assert fixpipe.scale_of(bits(x), vector=True) == m1(x) != np.float32(x)
    assert fixpipe.scale_of(bits(-2.5), vector=True) == np.float32(-2.5)
    assert fixpipe.scale_of(0, vector=True) == 0
    # exponent 0 with a mantissa is (1 + m/1024) * 2^-127, not an IEEE subnormal
    w = 1 << 13
    assert fixpipe.scale_of(w, vector=True) == np.float32((1 + 1 / 1024) * 2.0 ** -127)


def test_per_column_words_carry_their_own_offset_and_sign():
    src = np.array([[-3.0, -3.0, 2.4]], np.float32)
    w = np.array([SIGNED | bits(1.0), bits(1.0), SIGNED | (5 << 37) | bits(1.0)], np.uint64)
    np.testing.assert_array_equal(fixpipe.quantize(src, np.int8, w, False, vector=True), [[-3, 0, 7]])


def test_the_offset_field_is_a_signed_9_bit_zero_point():
    src = np.array([[10.0, 10.0]], np.float32)
    w = np.array([SIGNED | (0x1FB << 37) | bits(1.0), SIGNED | (5 << 37) | bits(1.0)], np.uint64)  # -5, +5
    np.testing.assert_array_equal(fixpipe.quantize(src, np.int8, w, False, vector=True), [[5, 15]])
    # a negative run-time DT_INT32 scale, widened with sign extension as the real codegen does: offset -1
    from pypto_pro.ops.fixpipe_scale import deq_word
    deq = deq_word({"deq_runtime": "bits", "deq_dst": "DT_INT8"}, bits(-1.0) - 2 ** 32)
    assert (deq >> 37) & 0x1FF == 0x1FF
    np.testing.assert_array_equal(fixpipe.quantize(np.array([[3.0, -2.0]], np.float32), np.int8, deq, False),
                                  [[-4, 1]])


def _kernel(out_dtype, how="store", arch="a5", acc_dtype=pl.DT_FP32, in_dtype=pl.DT_FP32, fp_cols=T, fp_valid=None,
            per_tensor=None):
    def kernel(a: pl.Tensor[[T, T], in_dtype], b: pl.Tensor[[T, T], in_dtype],
               fp_params: pl.Tensor[[1, T], pl.DT_INT64], out: pl.Tensor[[T, T], out_dtype]):
        if how.startswith("move"):
            vt = pl.make_tile(pl.TileType([T, T], out_dtype, Vec), addr=0)
        a1 = pl.make_tile_group(type=pl.TileType([T, T], in_dtype, Mat, layout=pl.NZ), addrs=0, mutex_ids=[0])[0]
        b1 = pl.make_tile_group(type=pl.TileType([T, T], in_dtype, Mat, layout=pl.NZ), addrs=0x10000,
                                mutex_ids=[1])[0]
        f1 = pl.make_tile_group(type=pl.TileType([1, fp_cols], pl.DT_INT64, Mat, layout=pl.ND), addrs=0x20000,
                                mutex_ids=[5])[0]
        xa = pl.make_tile_group(type=pl.TileType([T, T], in_dtype, Left, layout=pl.NZ), addrs=0, mutex_ids=[2])[0]
        xb = pl.make_tile_group(type=pl.TileType([T, T], in_dtype, Right, layout=pl.ZN), addrs=0, mutex_ids=[3])[0]
        acc = pl.make_tile_group(type=pl.TileType([T, T], acc_dtype, Acc, layout=pl.NZ, fractal=1024), addrs=0,
                                 mutex_ids=[4])[0]
        fpt = pl.make_tile_group(type=pl.TileType([1, fp_cols], pl.DT_INT64, Scaling), addrs=0, mutex_ids=[6])[0]
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(xa, a1)
            pl.move(xb, b1)
            pl.matmul(acc, xa, xb)
            if fp_valid is not None:
                pl.set_validshape(f1, [1, fp_valid])
                pl.set_validshape(fpt, [1, fp_valid])
            pl.load(f1, fp_params, [0, 0])
            pl.move(fpt, f1)
            if per_tensor is not None:
                pl.store(out, acc, [0, 0], scale=per_tensor)
            elif how == "store":
                pl.store(out, acc, [0, 0], scale=fpt)
            elif how == "store_tile":
                pl.store_tile(out, acc, [0, 0], scale=fpt)
            else:
                pl.move(vt, acc, scale=fpt, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0,
                        relu_pre_mode=pl.ReluPreMode.NormalRelu if how == "move_relu" else None)
                pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
        if how.startswith("move"):
            with pl.section_vector():
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
                if pl.get_subblock_idx() == 0:
                    pl.store(out, vt, [0, 0])
    return pl.jit(kernel, auto_mutex=True, arch=arch)


def _operands(rng, in_dtype=np.float32):
    a = rng.integers(-4, 5, (T, T)).astype(in_dtype)
    b = np.eye(T, dtype=in_dtype)
    return a, b


@pytest.mark.parametrize("how", ["store", "store_tile", "move", "move_relu"])
def test_int8_per_column_scales(how):
    rng = np.random.default_rng(1)
    a, b = _operands(rng)
    scales = [0.5 + 0.1 * i for i in range(T)]  # none exact in M1 but 0.5, ...
    out = np.zeros((T, T), np.int8)
    report = _kernel(pl.DT_INT8, how)(a, b, words(scales), out)
    assert report.faults == []
    want = np.clip(np.rint(a * np.array([m1(s) for s in scales], np.float32)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(out, np.maximum(want, 0) if how == "move_relu" else want)


def test_the_m1_truncation_is_visible_in_the_result():
    # 1.0 + 2^-12 is lost in M1 (10 mantissa bits): 2048 * that scale rounds to 2048 (fp32) vs 2048.5 -> 2048 ...
    # so use fp32 output, where the scale is applied exactly (a5 VQF322F32_PRE)
    rng = np.random.default_rng(2)
    a, b = _operands(rng)
    s = 1.0 + 2.0 ** -12
    out = np.zeros((T, T), np.float32)
    _kernel(pl.DT_FP32)(a, b, words([s] * T, signed=False), out)
    np.testing.assert_array_equal(out, a)  # the scale read is exactly 1.0


def test_int32_dequantises_to_fp16_per_column():
    rng = np.random.default_rng(3)
    a, b = _operands(rng, np.int8)
    scales = [0.1 * (i + 1) for i in range(T)]
    out = np.zeros((T, T), np.float16)
    _kernel(pl.DT_FP16, acc_dtype=pl.DT_INT32, in_dtype=pl.DT_INT8)(a, b, words(scales), out)
    want = (a.astype(np.float32) * np.array([m1(s) for s in scales], np.float32)).astype(np.float16)
    np.testing.assert_array_equal(out, want)


def test_a_scaling_tile_narrower_than_the_store_is_a_located_fault():
    rng = np.random.default_rng(4)
    a, b = _operands(rng)
    with pytest.raises(SimulationError, match="the Scaling tile has 32 valid columns; this fixpipe transfer scales "
                                              "columns 0 .. 63"):
        _kernel(pl.DT_INT8, fp_valid=32)(a, b, words([1.0] * T), np.zeros((T, T), np.int8))


def test_a2a3_has_no_per_channel_fp32_to_fp16_mode():
    with pytest.raises(CompileError, match="the a2a3 fixpipe has no per-channel quantisation from DT_FP32 to DT_FP16"):
        _kernel(pl.DT_FP16, arch="a2a3").compile()


def _bad(scale_tile_type=None, extra="", scale_expr="fpt"):
    """A kernel whose store passes ``scale_expr``; returns the CompileError of compiling it."""
    src = f'''
def kernel(out: pl.Tensor[[T, T], pl.DT_INT8], st: pl.Tensor[[1, T], pl.DT_INT64], h: pl.DT_FP16):
    vt = pl.make_tile(pl.TileType([T, T], pl.DT_INT8, Vec), addr=0)
    with pl.section_cube():
        acc = pl.make_tile(pl.TileType([T, T], pl.DT_FP32, Acc, layout=pl.NZ, fractal=1024), addr=0)
        fpt = pl.make_tile({scale_tile_type or "pl.TileType([1, T], pl.DT_INT64, Scaling)"}, addr=0)
        {extra or f"pl.store(out, acc, [0, 0], scale={scale_expr})"}
    with pl.section_vector():
        pass
'''
    scope = {"pl": pl, "T": T, "Vec": Vec, "Acc": Acc, "Scaling": Scaling, "Mat": Mat}
    import linecache
    name = f"<bad-{abs(hash(src))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), scope)
    with pytest.raises(CompileError) as err:
        pl.jit(scope["kernel"], arch="a5").compile()
    assert isinstance(err.value, ParserSyntaxError) and err.value.line is not None
    return str(err.value)


@pytest.mark.parametrize("tile_type, match", [
    ("pl.TileType([1, T], pl.DT_INT64, Mat)", "scale Tile must be allocated in MemorySpace.Scaling"),
    ("pl.TileType([T, 1], pl.DT_INT64, Scaling)", r"shape \[1, N\] \(row == 1\), got \[64, 1\]"),
    ("pl.TileType([1, 8], pl.DT_INT64, Scaling)", r"N must be a multiple of 16 .* got \[1, 8\]"),
    ("pl.TileType([1, 1024], pl.DT_INT64, Scaling)", r"does not fit Scaling \(4096 bytes on a5\)"),
    ("pl.TileType([1, T], pl.DT_FP32, Scaling)", r"scale tile dtype FP32 is not supported.*npu_trans_quant_param"),
    ("pl.TileType([1, T], pl.DT_INT32, Scaling)", r"scale tile dtype must be INT64, got int32"),
])
def test_the_scaling_tile_is_checked_as_the_real_frontend(tile_type, match):
    import re
    assert re.search(match, _bad(tile_type))


@pytest.mark.parametrize("extra, match", [
    ("pl.store(out, acc, [0, 0], scale=fpt, relu_pre_mode=pl.ReluPreMode.NormalRelu)",
     "scale \\(per-channel\\) cannot be used together with relu_pre_mode"),
    ("pl.store(out, acc, [0, 0], scale=fpt, phase=pl.STPhase.Partial)",
     "scale \\(per-channel\\) cannot be combined with phase"),
    ("pl.move(vt, acc, scale=fpt, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)",
     "scale \\(per-channel\\) only supports single-mode acc_to_vec_mode"),
    ("pl.store(out, acc, [0, 0], scale=st)", "scale Tensor is not supported for per-channel quantization"),
    ("pl.store(out, acc, [0, 0], scale=h)", "scale runtime scalar dtype fp16 is not supported"),
    ("pl.store(out, acc, [0, 0], scale='x')", "scale must be float, int"),
])
def test_what_cannot_combine_with_a_per_channel_scale(extra, match):
    import re
    assert re.search(match, _bad(extra=extra))


def test_a5_applies_a_per_tensor_scale_to_an_fp32_output():
    """a5's fixpipe has QF322F32_PRE: an fp32 -> fp32 store scales (a2a3 has no such mode and copies)."""
    a, b = _operands(np.random.default_rng(5))
    for arch, want in (("a5", a * 3), ("a2a3", a)):
        out = np.zeros((T, T), np.float32)
        _kernel(pl.DT_FP32, arch=arch, per_tensor=3.0)(a, b, words([1.0] * T), out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("shape", [[64], [1, 64, 1], []])
def test_a_scaling_tile_type_must_be_2d(shape):
    with pytest.raises(ValueError, match=r"scale tile must be 2D, got shape \["):
        pl.TileType(shape, pl.DT_INT64, Scaling)


def test_a_dict_display_is_a_parser_type_error_as_in_the_real_parser():
    from pypto_pro.errors import ParserTypeError

    def kernel(out: pl.Tensor[[T, T], pl.DT_INT8]):
        with pl.section_cube():
            acc = pl.make_tile(pl.TileType([T, T], pl.DT_FP32, Acc, layout=pl.NZ, fractal=1024), addr=0)
            pl.store(out, acc, [0, 0], scale={"value": 2.0})
    with pytest.raises(ParserTypeError, match="Unsupported closure variable type: dict") as err:
        pl.jit(kernel, arch="a5").compile()
    assert err.value.line is not None
