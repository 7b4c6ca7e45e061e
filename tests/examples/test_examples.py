"""End-to-end checks of the example kernels (examples/add.py, softmax.py, rmsnorm.py) against torch.

Each example runs through the whole pipeline (parse -> passes -> simulator) on both archs, on
shapes that are not multiples of the tile (partial last row tile, N < tile width) and with
block counts below, equal to and above the number of row tiles (so blocks loop over several
tiles and the double-buffer rings wrap around, or some blocks get no work at all).

Tolerances. add is exact: fp16 + fp16 rounded once to fp16 is what torch computes, so
``torch.equal``. softmax and rmsnorm compute in fp32 and round once to fp16, like the torch
references (fp32 math, then ``.half()``). The two fp32 results differ only by a few fp32 ulps
(exp rounding, summation order: a binary tree here, torch's vectorised order there), i.e. a
relative difference around 1e-6, far below half an fp16 ulp (2^-11 ~ 4.9e-4). So each fp16
output equals the reference or is its neighbour (when the fp32 value sits next to an fp16
rounding boundary): we assert at most 1 fp16 ulp apart, which is the same as
``|y - ref| <= 2^-10 * |ref| + 2^-24`` (rtol = one fp16 ulp ~ 9.8e-4 relative; atol = the
fp16 subnormal spacing for outputs that underflow, e.g. softmax probabilities below 6e-5).
"""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.testing import max_ulp_distance
from example_modules import load_example

ARCHS = ("a5", "a2a3")
add_example = load_example("add")
softmax_example = load_example("softmax")
rmsnorm_example = load_example("rmsnorm")


def assert_fp16_close(y: torch.Tensor, ref: torch.Tensor) -> None:
    assert y.dtype == ref.dtype == torch.float16 and y.shape == ref.shape
    assert torch.isfinite(y).all(), "non-finite output"
    torch.testing.assert_close(y.float(), ref.float(), rtol=2 ** -10, atol=2 ** -24)
    assert max_ulp_distance(y, ref) <= 1


# ---- add (the seed kernel) ----------------------------------------------------------------------

_ADD_KERNELS = {"a5": add_example.add_kernel}


def add_kernel_for(arch: str):
    if arch not in _ADD_KERNELS:
        _ADD_KERNELS[arch] = pl.jit(add_example.add_kernel.fn, arch=arch)
    return _ADD_KERNELS[arch]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,block_dim", [
    (128, 128, 1),
    (512, 384, 3),    # 4 tile rows, 3 blocks: block 0 takes rows 0 and 3 (ring wraps)
    (512, 384, 7),    # 4 tile rows, 7 blocks: blocks 4-6 get no work
    (384, 256, 3),    # one tile row per block
])
def test_add_sizes(arch, m, n, block_dim):
    torch.manual_seed(m * 7 + n + block_dim)
    x = torch.randn([m, n]).half()
    y = torch.randn([m, n]).half()
    z = torch.full([m, n], float("nan"), dtype=torch.float16)
    report = add_kernel_for(arch)[None, block_dim](x, y, z)
    assert report.block_num == block_dim and report.arch == arch
    assert torch.equal(z, x + y)


def test_add_8192x4096_a2a3():
    """The seed size on a2a3 (main() runs it on a5): 64 tile rows over 64 blocks, 32 tiles each."""
    m, n = 8192, 4096
    torch.manual_seed(1)
    x = torch.rand([m, n], dtype=torch.float16)
    y = torch.rand([m, n], dtype=torch.float16)
    z = torch.empty([m, n], dtype=torch.float16)
    add_kernel_for("a2a3")[None, m // 128](x, y, z)
    assert torch.equal(z, x + y)


# ---- softmax --------------------------------------------------------------------------------------

SOFTMAX_ROWS = (1, 7, 129, 1000)
SOFTMAX_COLS = (64, 100, 1000)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m", SOFTMAX_ROWS)
@pytest.mark.parametrize("n", SOFTMAX_COLS)
def test_softmax_shapes(arch, m, n):
    torch.manual_seed(m * 1009 + n)
    x = (torch.randn([m, n]) * 3).half()
    y = softmax_example.softmax(x, arch=arch)
    assert_fp16_close(y, softmax_example.reference(x))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("block_dim", [1, 2, 5, 40])
def test_softmax_block_dims(arch, block_dim):
    """Small [8, 128] tiles: 129 rows are 17 row tiles (last one has 1 row) over 1-40 blocks."""
    torch.manual_seed(block_dim)
    x = (torch.randn([129, 100]) * 3).half()
    y = softmax_example.softmax(x, arch=arch, block_dim=block_dim, rows=8, cols=128)
    assert_fp16_close(y, softmax_example.reference(x))


@pytest.mark.parametrize("arch", ARCHS)
def test_softmax_extreme_inputs(arch):
    """Large magnitudes (exp would overflow without the max subtraction) and -inf (masked) entries."""
    torch.manual_seed(3)
    x = (torch.rand([50, 300]) * 120000 - 60000).half()
    x[::3, ::7] = float("-inf")
    x[5] = 65504.0          # a constant row: uniform output
    x[6, :] = -65504.0
    x[6, 17] = 0.0          # one-hot output
    y = softmax_example.softmax(x, arch=arch)
    ref = softmax_example.reference(x)
    assert_fp16_close(y, ref)
    assert torch.all(y[6, torch.arange(300) != 17] == 0) and y[6, 17] == 1


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n", [(7, 1), (33, 1024), (1, 1024)], ids=["1col", "fullwidth", "1row-fullwidth"])
def test_softmax_edge_widths(arch, m, n):
    """A single column (output exactly 1) and N equal to the tile width (no partial columns)."""
    torch.manual_seed(n + m)
    x = (torch.randn([m, n]) * 3).half()
    y = softmax_example.softmax(x, arch=arch)
    assert_fp16_close(y, softmax_example.reference(x))
    if n == 1:
        assert torch.all(y == 1)


def test_softmax_rejects_too_many_columns():
    with pytest.raises(ValueError, match="exceed the tile width"):
        softmax_example.softmax(torch.zeros([2, 1025], dtype=torch.float16))


@pytest.mark.parametrize("arch", ARCHS)
def test_softmax_tile_fits_ub(arch):
    """The default tile is the largest that fits the UB: the next row count that keeps the [rows, 1] DN row
    vectors aligned (8 more rows) would not compile."""
    rows = softmax_example.tile_rows_for(arch)
    assert rows >= 8 and rows % 8 == 0
    x = torch.zeros([rows + 8, 8], dtype=torch.float16)
    softmax_example.make_softmax_kernel(arch, rows=rows)[None, 1](x, torch.empty_like(x))
    with pytest.raises(CompileError, match="does not fit"):
        softmax_example.make_softmax_kernel(arch, rows=rows + 8)[None, 1](x, torch.empty_like(x))


# ---- rmsnorm --------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m", SOFTMAX_ROWS)
@pytest.mark.parametrize("n", SOFTMAX_COLS)
def test_rmsnorm_shapes(arch, m, n):
    torch.manual_seed(m * 1013 + n)
    x = (torch.randn([m, n]) * 2).half()
    gamma = (torch.rand([n]) * 2 - 0.5).half()
    y = rmsnorm_example.rmsnorm(x, gamma, eps=1e-5, arch=arch)
    assert_fp16_close(y, rmsnorm_example.reference(x, gamma, eps=1e-5))


@pytest.mark.parametrize("arch", ARCHS)
def test_rmsnorm_tile_fits_ub(arch):
    rows = rmsnorm_example.tile_rows_for(arch)
    assert rows >= 8 and rows % 8 == 0
    x = torch.zeros([rows + 8, 8], dtype=torch.float16)
    g = torch.ones([8], dtype=torch.float16)
    rmsnorm_example.make_rmsnorm_kernel(arch, rows=rows)[None, 1](x, g, torch.empty_like(x), 1e-6)
    with pytest.raises(CompileError, match="does not fit"):
        rmsnorm_example.make_rmsnorm_kernel(arch, rows=rows + 8)[None, 1](x, g, torch.empty_like(x), 1e-6)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n", [(7, 1), (33, 1024)], ids=["1col", "fullwidth"])
def test_rmsnorm_edge_widths(arch, m, n):
    torch.manual_seed(n + m)
    x = (torch.randn([m, n]) * 2).half()
    gamma = (torch.rand([n]) + 0.5).half()
    y = rmsnorm_example.rmsnorm(x, gamma, arch=arch)
    assert_fp16_close(y, rmsnorm_example.reference(x, gamma))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("block_dim", [1, 3, 40])
def test_rmsnorm_gamma_2d_block_dims(arch, block_dim):
    """gamma as a [1, N] tensor, [8, 128] tiles, 17 row tiles over 1-40 blocks."""
    torch.manual_seed(block_dim)
    x = (torch.randn([129, 100]) * 2).half()
    gamma = (torch.rand([1, 100]) + 0.5).half()
    y = rmsnorm_example.rmsnorm(x, gamma, arch=arch, block_dim=block_dim, rows=8, cols=128)
    assert_fp16_close(y, rmsnorm_example.reference(x, gamma))


@pytest.mark.parametrize("arch", ARCHS)
def test_rmsnorm_eps_is_a_runtime_parameter(arch):
    """A zero row gives 0 / sqrt(eps) = 0; a tiny row is dominated by eps. The same compiled kernel
    runs with two eps values (eps is a run-time ``float`` parameter)."""
    x = torch.zeros([9, 64], dtype=torch.float16)
    x[1] = 1e-3
    x[2:] = torch.randn([7, 64]).half()
    gamma = torch.ones([64], dtype=torch.float16)
    for eps in (1e-6, 1e-2):
        y = rmsnorm_example.rmsnorm(x, gamma, eps=eps, arch=arch)
        assert_fp16_close(y, rmsnorm_example.reference(x, gamma, eps=eps))
        assert torch.all(y[0] == 0)


# ---- main() of every example ---------------------------------------------------------------------


@pytest.mark.parametrize("module", [add_example, softmax_example, rmsnorm_example],
                         ids=["add", "softmax", "rmsnorm"])
def test_main_runs(module, capsys):
    module.main()   # raises SystemExit(1) on a mismatch
    out = capsys.readouterr().out
    assert "matches torch: True" in out and "matches torch: False" not in out
