"""The catalogue's trip-count and edge-size dependent bugs (``bug_catalogue.py``): caught exactly where
they should be, and clean where they cannot happen."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch
from bug_catalogue import (
    ARCHS,
    R,
    _check_colsum,
    blocks_same_gm,
    colsum_args,
    colsum_ok,
    edge_validshape,
    kernel,
    lock_never_released,
    mutex_ok,
    padded_colsum,
    ring_drain_one_trip,
    ring_ok,
    unpaired_set,
    war_ring,
    xz,
)
from example_modules import load_example
from located import line_of

import pypto_pro.language as pl
from pypto_pro import (
    RaceError,
    SyncError,
    UninitializedReadError,
)

@pytest.fixture(autouse=True)
def _no_check_override(monkeypatch):
    monkeypatch.delenv("PYPTO_PRO_CHECK", raising=False)
    monkeypatch.delenv("PYPTO_PRO_TRACE", raising=False)


# ---- trip-count and edge-size dependent bugs: caught exactly where they should be --------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 2), (9, 3), (5, 3)])
def test_war_ring_needs_three_trips(arch, tiles, blocks):
    """Missing back edge on a double buffer: harmless while each slot is used at most once per
    block (<= 2 trips), a race from the third trip on."""
    trips = max(len(range(b, tiles, blocks)) for b in range(blocks))
    x, z = xz(tiles * R)()
    run = kernel(war_ring, arch).options(check="raise")[None, blocks]
    if trips >= 3:
        with pytest.raises(RaceError) as err:
            run(x, z)
        assert line_of(war_ring, "load") in str(err.value) and line_of(war_ring, "read") in str(err.value)
    else:
        run(x, z)
        np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(2, 2), (3, 2), (1, 1), (5, 4)])
def test_missing_drain_noted_when_a_block_runs_one_trip(arch, tiles, blocks):
    """A flag left set at kernel end is a note with the set's line, not a fault: this launch's result
    does not depend on it, and the real flash-attention kernels pre-set slot-free flags this way."""
    x, z = xz(tiles * R)()
    report = kernel(ring_drain_one_trip, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    np.testing.assert_array_equal(z, 2 * x)
    notes = [n for n in report.notes if re.search(r"set_flag\(V, MTE2, event=1\) is never waited for", n)]
    assert len(notes) == 1 and line_of(ring_drain_one_trip, "preset") in notes[0], report.notes


@pytest.mark.parametrize("arch", ARCHS)
def test_unpaired_set_is_noted_with_its_line(arch):
    x, z = xz(64)()
    report = kernel(unpaired_set, arch).options(check="raise")[None, 2](x, z)
    assert report.faults == []
    notes = [n for n in report.notes if "set_flag(MTE3, MTE2, event=1) is never waited for" in n]
    assert len(notes) == 1 and line_of(unpaired_set, "set") in notes[0], report.notes


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(4, 2), (2, 1), (7, 3), (3, 1)])
def test_missing_drain_clean_when_every_block_runs_two_or_more_trips(arch, tiles, blocks):
    x, z = xz(tiles * R)()
    report = kernel(ring_drain_one_trip, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(64, 4), (64, 1), (32, 2), (16, 1)])
def test_edge_validshape_clean_on_exact_multiples(arch, m, blocks):
    x, z = colsum_args(m)()
    report = kernel(edge_validshape, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    _check_colsum(x, z)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(4 * R - 8, 4), (R + 1, 2), (5, 1), (3 * R - 15, 3)])
def test_edge_validshape_caught_on_ragged_sizes(arch, m, blocks):
    """Caught when the block that gets the partial tile has not written the slot's tail rows
    before (each block here handles exactly one tile, the last one partial)."""
    x, z = colsum_args(m)()
    with pytest.raises(UninitializedReadError) as err:
        kernel(edge_validshape, arch).options(check="raise")[None, blocks](x, z)
    assert line_of(edge_validshape, "sum") in str(err.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_edge_validshape_stale_rows_give_wrong_sums(arch):
    """With one block the partial tile reuses the slot of the full tiles before it: the sum adds
    the previous tile's rows. The numbers are wrong (this test documents it)..."""
    m = 3 * R - 8
    x, z = colsum_args(m)()
    kernel(edge_validshape, arch).options(check="off")[None, 1](x, z)
    assert not np.allclose(z[-1], x[2 * R:].sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_edge_validshape_caught_even_with_stale_rows(arch):
    """...and the read of rows this tile's load did not write is reported all the same: they hold
    the previous tile's data (the message names the sum and the load that left them stale)."""
    x, z = colsum_args(3 * R - 8)()
    with pytest.raises(UninitializedReadError, match="did not write") as err:
        kernel(edge_validshape, arch).options(check="raise")[None, 1](x, z)
    assert line_of(edge_validshape, "sum") in str(err.value)
    assert line_of(edge_validshape, "load") in str(err.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_zero_padding_written_once_is_not_stale(arch):
    """Padding a tile once (a fill) and then loading partial tiles into it is correct: the rows
    past the data hold the fill's zeros, not another tile's data."""
    x, z = colsum_args(3 * R - 8)()
    kernel(padded_colsum, arch).options(check="raise")[None, 1](x, z)
    expected = [x[i * R:(i + 1) * R].sum(axis=0) for i in range(3)]
    np.testing.assert_allclose(z, np.stack(expected), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_two_blocks_same_gm_needs_two_blocks(arch):
    x, z = xz(64)()
    kernel(blocks_same_gm, arch).options(check="raise")[None, 1](x, z)  # one block: stores are in order


def test_buffer_id_held_at_kernel_end_is_reported():
    x, z = xz(64)()
    with pytest.raises(SyncError, match="buffer id 0"):
        kernel(lock_never_released, "a5").options(check="raise")[None, 4](x, z)


def test_mutex_api_is_a5_only():
    from pypto_pro import CompileError
    with pytest.raises(CompileError, match="no hardware buffer mutex"):
        kernel(mutex_ok, "a2a3").compile()


# ---- zero reports: correct kernels (examples, shared test kernels) never report a fault --------

def _clean(report) -> None:
    assert report.faults == [] and report.cycles > 0


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(300, 200, 1), (300, 200, 3), (1000, 260, 5), (128, 128, 2)])
def test_zero_reports_seed_add(arch, m, n, blocks):
    add = pl.jit(load_example("add").add_kernel.fn, arch=arch)  # same source, both archs, auto sync
    torch.manual_seed(m + n)
    x, y = torch.rand(m, n, dtype=torch.float16), torch.rand(m, n, dtype=torch.float16)
    z = torch.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _clean(add.options(check="raise")[None, blocks](x, y, z))
    fm, fn = m // 128 * 128, n // 128 * 128   # the seed add covers whole tiles only
    assert torch.equal(z[:fm, :fn], (x + y)[:fm, :fn])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(37, 100, 1), (37, 100, 3), (50, 128, 7)])
def test_zero_reports_softmax(arch, m, n, blocks):
    sm = load_example("softmax")
    k = sm.get_softmax_kernel(arch, 128, 8)
    torch.manual_seed(m)
    x = (torch.randn(m, n) * 3).half()
    y = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y))
    assert torch.allclose(y.float(), sm.reference(x).float(), rtol=2 ** -10, atol=2 ** -24)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(37, 100, 1), (37, 100, 3), (50, 128, 7)])
def test_zero_reports_rmsnorm(arch, m, n, blocks):
    rn = load_example("rmsnorm")
    k = rn.get_rmsnorm_kernel(arch, 128, 8)
    torch.manual_seed(m)
    x = (torch.randn(m, n) * 2).half()
    gamma = (torch.rand(n) + 0.5).half()
    y = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, gamma, y, 1e-6))
    assert torch.allclose(y.float(), rn.reference(x, gamma).float(), rtol=2 ** -10, atol=2 ** -24)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(129, 300, 1), (129, 300, 2), (300, 1056, 4), (1000, 300, 20)])
def test_zero_reports_shared_add_fn(arch, m, n, blocks):
    from kernels import add_fn
    k = pl.jit(add_fn, arch=arch)
    torch.manual_seed(n)
    x, y = torch.rand(m, n, dtype=torch.float16), torch.rand(m, n, dtype=torch.float16)
    z = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y, z))
    assert torch.equal(z, x + y)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("blocks", [1, 3, 4, 6])
def test_zero_reports_shared_static_add_fn(arch, blocks):
    from kernels import static_add_fn
    k = pl.jit(static_add_fn, arch=arch)
    x, y = torch.rand(256, 128), torch.rand(256, 128)
    z = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y, z))
    assert torch.equal(z, x + y)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(1, 1), (2, 1), (5, 1), (5, 2), (7, 3), (2, 4)])
def test_zero_reports_ring_ok_any_trip_count(arch, tiles, blocks):
    x, z = xz(tiles * R)()
    _clean(kernel(ring_ok, arch).options(check="raise")[None, blocks](x, z))
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(4 * R - 8, 4), (4 * R - 8, 1), (5, 1), (3 * R + 1, 2)])
def test_zero_reports_colsum_ok_ragged(arch, m, blocks):
    x, z = colsum_args(m)()
    _clean(kernel(colsum_ok, arch).options(check="raise")[None, blocks](x, z))
    _check_colsum(x, z)
