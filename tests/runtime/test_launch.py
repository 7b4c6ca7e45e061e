"""Launch path: JIT on first call, cache reuse, argument checks (LaunchError leaves outputs untouched)."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import LaunchError
from kernels import add_fn, static_add_fn


def _data(m, n, dtype=torch.float16):
    torch.manual_seed(m * 7 + n)
    return torch.rand(m, n, dtype=dtype), torch.rand(m, n, dtype=dtype)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("m,n,blocks", [(8192, 4096, 64), (1000, 300, 3), (1000, 300, 20), (256, 512, 1),
                                        (129, 33 * 32, 7)])
def test_add_exact(arch, m, n, blocks):
    k = pl.jit(add_fn, arch=arch)
    x, y = _data(m, n)
    z = torch.full((m, n), -7.0, dtype=torch.float16)
    k[None, blocks](x, y, z)
    assert torch.equal(z, x + y)


def test_numpy_arrays_and_bare_call():
    k = pl.jit(add_fn)
    x = np.random.default_rng(0).random((300, 200)).astype(np.float16)
    y = np.random.default_rng(1).random((300, 200)).astype(np.float16)
    z = np.zeros_like(x)
    k(x, y, z)  # one block does every tile
    assert np.array_equal(z, x + y)


def test_cache_reuse_and_recompile_per_arch():
    k = pl.jit(add_fn)
    x, y = _data(256, 256)
    z = torch.empty_like(x)
    k[None, 2](x, y, z)
    entry = dict(k._compiled_by_signature)
    x2, y2 = _data(384, 128)
    k[None, 3](x2, y2, torch.empty_like(x2))
    assert dict(k._compiled_by_signature) == entry, "a new dynamic shape must reuse the compiled kernel"


def test_static_shapes_and_in_place_op():
    k = pl.jit(static_add_fn, arch="a2a3")
    x, y = _data(256, 128, torch.float32)
    z = torch.zeros_like(x)
    k[None, 3](x, y, z)
    assert torch.equal(z, x + y)


def test_report_counts_waves():
    k = pl.jit(add_fn)
    x, y = _data(128, 128)
    report = k[None, 100](x, y, torch.empty_like(x))
    assert report.waves == 2 and report.physical_cores == 64  # a5 (950PR_9589): 32 x 2 vector cores
    assert "100 blocks" in report.summary()


# ---- LaunchError: named parameter, outputs untouched --------------------------------------------

BAD_CALLS = [  # (what, arguments, message, the builtin class the real runtime raises)
    ("dtype", lambda x, y, z: (x.float(), y, z), "'x' dtype mismatch", TypeError),
    ("rank", lambda x, y, z: (x, y.reshape(-1), z), "'y' rank mismatch: expected 2, got 1", ValueError),
    ("non_contiguous", lambda x, y, z: (x.t(), y.t(), z), "'x' is not contiguous", ValueError),
    ("not_tensor", lambda x, y, z: (x, [1, 2], z), "'y' expected torch.Tensor", TypeError),
    ("missing", lambda x, y, z: (x, y), "missing a required argument: 'z'", TypeError),
    ("extra", lambda x, y, z: (x, y, z, z), "too many positional arguments", TypeError),
]


@pytest.mark.parametrize("name,mutate,needle,builtin", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_launch_errors_leave_outputs_untouched(name, mutate, needle, builtin):
    k = pl.jit(add_fn)
    x, y = _data(128, 128)
    z = torch.full((128, 128), 3.0, dtype=torch.float16)
    before = z.clone()
    with pytest.raises(LaunchError, match=None) as err:
        k[None, 1](*mutate(x, y, z))
    assert needle in str(err.value)
    assert isinstance(err.value, builtin)
    assert torch.equal(z, before)


@pytest.mark.parametrize("block_dim", [0, -1, 1.5, True, "4"])
def test_bad_block_dim(block_dim):
    k = pl.jit(add_fn)
    x, y = _data(128, 128)
    z = torch.full((128, 128), 3.0, dtype=torch.float16)
    with pytest.raises(LaunchError, match="block_dim must be a positive integer") as err:
        k[None, block_dim](x, y, z)
    assert isinstance(err.value, ValueError)
    assert torch.all(z == 3.0)


def test_static_dim_mismatch_and_unknown_keyword():
    k = pl.jit(static_add_fn)
    x, y = _data(256, 64, torch.float32)
    z = torch.full((256, 64), 5.0)
    with pytest.raises(LaunchError, match="'x' axis 1 mismatch: expected 128, got 64"):
        k[None, 1](x, y, z)
    with pytest.raises(LaunchError, match="unexpected keyword argument 'w'"):
        k[None, 1](x, y, z=z, w=z)
    assert torch.all(z == 5.0)


def test_read_only_output_rejected_before_running():
    k = pl.jit(add_fn)
    x = np.ones((128, 128), np.float16)
    z = np.zeros((128, 128), np.float16)
    z.setflags(write=False)
    with pytest.raises(LaunchError, match="output argument 'z' is read-only"):
        k(x, x, z)


def test_launch_config_errors():
    k = pl.jit(add_fn)
    with pytest.raises(ValueError, match="block_dim must be a positive integer"):
        k[None]
    with pytest.raises(ValueError, match=r"Expected kernel\[stream, block_dim\] or kernel\[block_dim\]"):
        k[None, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="it has no tiling_key"):
        k[None, 1, {"A": 0}]


def test_internal_frames_hidden_from_user_errors():
    k = pl.jit(add_fn)
    x, y = _data(128, 128)
    with pytest.raises(LaunchError) as err:
        k[None, 1](x, y)
    frames = [f.name for f in __import__("traceback").extract_tb(err.value.__traceback__)]
    assert "bind_arguments" not in frames
