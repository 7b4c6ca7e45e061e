"""Identical relaunches (runtime/launch_memo.py): exact outputs, report and prints, or a new simulation."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim.report import LaunchReport
from pypto_pro.runtime import launch_memo
from pypto_pro.runtime.launch_memo import LaunchMemo


@pytest.fixture
def always_slow(monkeypatch):
    monkeypatch.setattr(launch_memo, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(launch_memo, "FIRST_KEY_BYTES", 0)  # large arguments: keyed after a slow launch
    monkeypatch.delenv("PYPTO_PRO_SIM_MEMO", raising=False)


def _fake_run(calls, out, x, faults=()):
    def run(dispatched=None):
        calls.append(1)
        out[...] = x * 2  # the same math every time
        rep = LaunchReport("k", "a5", 1800.0, 1, 1, 1, cycles=10.0)
        rep.faults = list(faults)
        rep.device_log = "DumpHead: AIV-0\nhello\n"
        return rep
    return run


def test_third_identical_launch_is_a_hit(always_slow, capsys):
    memo, calls = LaunchMemo(), []
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    reports = [memo.launch(_fake_run(calls, out, x), 4, [x, out], {"n": 3}, (True, "raise")) for _ in range(4)]
    assert len(calls) == 2  # the first learns it is slow, the second keys and keeps, then hits
    assert all(r == reports[0] for r in reports) and reports[2] is not reports[1]
    assert capsys.readouterr().out.count("hello") == 2  # printed by the hits (the runs print in the executor)
    out[:] = -1
    memo.launch(_fake_run(calls, out, x), 4, [x, out], {"n": 3}, (True, "raise"))
    assert len(calls) == 3  # the output's initial bytes are part of the key
    memo.launch(_fake_run(calls, out, x), 4, [x, out], {"n": 3}, (True, "raise"))
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.parametrize("change", ["input byte", "scalar", "float sign", "block_num", "options", "other buffer"])
def test_any_change_simulates_again(always_slow, change):
    memo, calls = LaunchMemo(), []
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    args = {"block_num": 4, "scalars": {"n": 3, "a": 0.0}, "options": (True, "raise")}
    for _ in range(2):
        memo.launch(_fake_run(calls, out, x), args["block_num"], [x, out], args["scalars"], args["options"])
    assert len(calls) == 2
    if change == "input byte":
        x[5] = 100.0
    elif change == "scalar":
        args["scalars"] = {"n": 4, "a": 0.0}
    elif change == "float sign":
        args["scalars"] = {"n": 3, "a": -0.0}
    elif change == "block_num":
        args["block_num"] = 8
    elif change == "options":
        args["options"] = (True, "warn")
    else:
        x = x.copy()  # same bytes, another tensor
    memo.launch(_fake_run(calls, out, x), args["block_num"], [x, out], args["scalars"], args["options"])
    assert len(calls) == 3
    np.testing.assert_array_equal(out, x * 2)


def test_faulty_or_disabled_launches_are_not_remembered(always_slow, monkeypatch):
    memo, calls = LaunchMemo(), []
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    for _ in range(3):
        memo.launch(_fake_run(calls, out, x, faults=["race"]), 1, [x, out], {}, (True, "warn"))
    assert len(calls) == 3
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")
    memo, calls = LaunchMemo(), []
    for _ in range(3):
        memo.launch(_fake_run(calls, out, x), 1, [x, out], {}, (True, "raise"))
    assert len(calls) == 3


def test_small_arguments_are_keyed_before_the_first_launch(always_slow, monkeypatch):
    monkeypatch.setattr(launch_memo, "FIRST_KEY_BYTES", 1 << 20)
    memo, calls = LaunchMemo(), []
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    for _ in range(3):
        out[:] = 0  # as the real perf loops zero their output before each launch
        memo.launch(_fake_run(calls, out, x), 4, [x, out], {}, (True, "raise"))
        np.testing.assert_array_equal(out, x * 2)
    assert len(calls) == 1


def test_fast_launches_are_hashed_only_before_the_first(monkeypatch):
    monkeypatch.delenv("PYPTO_PRO_SIM_MEMO", raising=False)
    monkeypatch.setattr(launch_memo, "MIN_SECONDS", 1e9)  # every launch is fast
    hashed = []
    real = launch_memo._array_key
    monkeypatch.setattr(launch_memo, "_array_key", lambda a: (hashed.append(1), real(a))[1])
    memo, calls = LaunchMemo(), []
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    for _ in range(4):
        memo.launch(_fake_run(calls, out, x), 4, [x, out], {}, (True, "raise"))
    assert len(calls) == 4 and len(hashed) == 2  # the two arguments, before the first launch only


def test_unkeyable_scalar_simulates():
    with pytest.raises(TypeError):
        launch_memo._freeze(object())


@pl.jit
def _scale_kernel(x: pl.Tensor[[128, 128], pl.DT_FP16], z: pl.Tensor[[128, 128], pl.DT_FP16], s: pl.DT_FP32):
    t = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    a_g = pl.make_tile_group(type=t, addrs=0x0, mutex_ids=[0])
    c_g = pl.make_tile_group(type=t, addrs=0x8000, mutex_ids=[1])
    with pl.section_vector():
        a = a_g.next()
        c = c_g.next()
        pl.load(a, x, [0, 0])
        pl.muls(c, a, s)
        pl.store(z, c, [0, 0])


def test_kernel_relaunches_match_fresh_simulations(always_slow, monkeypatch):
    torch = pytest.importorskip("torch")
    x = torch.rand([128, 128], dtype=torch.float16)
    z = torch.zeros_like(x)
    exe = None
    counted = []
    reports = []
    for i in range(4):
        z.zero_()
        reports.append(_scale_kernel[None, 1](x, z, 1.5))
        if exe is None:
            entry = next(iter(_scale_kernel._compiled_by_signature.values()))
            exe = entry.executable
            real = exe.launch
            monkeypatch.setattr(exe, "launch", lambda *a, real=real, **k: (counted.append(1), real(*a, **k))[1])
        assert torch.equal(z, x * 1.5)
    assert len(counted) == 1  # launch 2 keyed and kept it; 3 and 4 were hits (FIRST_KEY_BYTES = 0)
    assert all(dataclasses.asdict(r) == dataclasses.asdict(reports[0]) for r in reports)
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")
    fresh = _scale_kernel[None, 1](x, z, 1.5)
    assert dataclasses.asdict(fresh) == dataclasses.asdict(reports[0])  # no state survives a launch


def _dispatching_run(calls, out, x, seen):
    def run(dispatched=None):
        calls.append(1)
        seen.append(dispatched is not None)
        if dispatched is not None:
            dispatched()  # every block dispatched, no byte changed yet
        out[...] = x * 2
        return LaunchReport("k", "a5", 1800.0, 1, 1, 1, cycles=10.0)
    return run


def test_a_slow_dispatch_keys_the_first_launch(always_slow, monkeypatch):
    monkeypatch.setattr(launch_memo, "DISPATCH_KEY_SECONDS", 0.0)
    memo, calls, seen = LaunchMemo(), [], []
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    for _ in range(3):
        out[:] = 0
        memo.launch(_dispatching_run(calls, out, x, seen), 4, [x, out], {}, (True, "raise"))
        np.testing.assert_array_equal(out, x * 2)
    assert len(calls) == 1 and seen == [True]  # the second identical launch is already a hit
    out[:] = 1  # the key holds the bytes before the launch, not those at its end
    memo.launch(_dispatching_run(calls, out, x, seen), 4, [x, out], {}, (True, "raise"))
    assert len(calls) == 2 and seen == [True, False]  # keyed up front now (the last launch was slow)


def test_a_fast_dispatch_or_costly_hash_does_not_key(always_slow, monkeypatch):
    for attr, value in (("DISPATCH_KEY_SECONDS", 1e9), ("HASH_BYTES_PER_SECOND", 1e-9)):
        monkeypatch.setattr(launch_memo, "DISPATCH_KEY_SECONDS", 0.0)
        monkeypatch.setattr(launch_memo, attr, value)
        memo, calls, seen = LaunchMemo(), [], []
        x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
        for _ in range(3):
            out[:] = 0
            memo.launch(_dispatching_run(calls, out, x, seen), 4, [x, out], {}, (True, "raise"))
        assert len(calls) == 2 and seen == [True, False]  # the third launch is the first hit, as before


def test_kernel_keyed_at_dispatch_matches_fresh_simulations(always_slow, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(launch_memo, "DISPATCH_KEY_SECONDS", 0.0)
    x = torch.rand([128, 128], dtype=torch.float16)
    z = torch.zeros_like(x)
    counted, reports = [], []
    for i in range(3):
        z.fill_(float("nan"))  # the output's bytes before the launch are keyed, not those it writes
        reports.append(_scale_kernel[None, 1](x, z, 2.5))
        assert torch.equal(z, x * 2.5)
        if i == 0:
            exe = next(iter(_scale_kernel._compiled_by_signature.values())).executable
            real = exe.launch
            monkeypatch.setattr(exe, "launch", lambda *a, _real=real, **k: (counted.append(1), _real(*a, **k))[1])
    assert counted == []  # launches 2 and 3 were hits
    assert all(dataclasses.asdict(r) == dataclasses.asdict(reports[0]) for r in reports)
    z.zero_()  # other bytes before the launch: simulated
    _scale_kernel[None, 1](x, z, 2.5)
    assert counted == [1] and torch.equal(z, x * 2.5)


def test_a_large_arguments_digest_is_of_its_chunks_and_sees_every_byte(monkeypatch):
    """Arguments above ``CHUNK`` are hashed chunk by chunk on threads: equal bytes, equal digests; one
    changed byte in any chunk, or another length, another digest."""
    from pypto_pro.runtime import launch_memo
    monkeypatch.setattr(launch_memo, "CHUNK", 1000)
    a = np.random.default_rng(0).integers(0, 256, 10_500, dtype=np.uint8)
    d = launch_memo._digest(a)
    assert d == launch_memo._digest(a.copy()) and d != launch_memo._sha(memoryview(a))
    for i in (0, 999, 1000, 5_555, 10_499):
        b = a.copy()
        b[i] ^= 1
        assert launch_memo._digest(b) != d
    assert launch_memo._digest(a[:-1]) != d
