"""Fingerprints of the example kernels on the simulator: one SHA-256 per run of its outputs and of its
launch report (cycles, per-block and per-pipe busy, bytes, faults). A change that is meant to make the
simulator faster without changing what it computes must leave every line the same:

    python benchmarks/sim_fingerprint.py > after.json
    git archive <base> | tar -x -C /tmp/base && PYTHONPATH=/tmp/base python benchmarks/sim_fingerprint.py > before.json
    diff before.json after.json

Shapes are small (the whole set runs in well under a minute on one core); runs cover both archs,
edge tiles, several waves, the three check modes, timing off, causal and non-causal flash attention
at three preload depths, a trace (whose files are fingerprinted too), and on a5 the register-level VF
row softmax of ``benchmarks/vf_softmax.py`` and a VF body with loop-carried max / sum accumulators
(the batched plans' scans).
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
sys.path.append(str(HERE))  # (after examples/: benchmarks/ has a flash_attention.py of its own)


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.hexdigest()[:16]


def report_digest(report) -> str:
    """Everything a launch report says, except wall-clock-dependent fields (there are none today)."""
    d = report.to_dict()
    d["blocks_detail"] = [(b.block, b.core, b.start, b.end, sorted(b.busy.items())) for b in report.blocks]
    d["faults"] = list(report.faults)
    d["path_bytes"] = sorted(d["path_bytes"].items())
    d.pop("trace_files", None)
    return _sha(json.dumps(d, sort_keys=True, default=str).encode())


def _arrays(*arrays) -> str:
    return _sha(*(np.ascontiguousarray(a).tobytes() for a in arrays))


def _run(name: str, launch, outputs, results: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = launch()
    results[name] = {"out": _arrays(*outputs), "report": report_digest(report) if report is not None else None}


def cases() -> dict:
    import add
    import flash_attention as fa
    import matmul
    import matmul_softmax
    import rmsnorm
    import softmax
    import torch
    results: dict = {}
    rng = np.random.default_rng(0)
    for arch in ("a5", "a2a3"):
        kern = pl.jit(add.add_kernel.fn, arch=arch)
        x = torch.from_numpy(rng.standard_normal((512, 384)).astype(np.float16))
        y = torch.from_numpy(rng.standard_normal((512, 384)).astype(np.float16))
        for check in ("raise", "warn", "off"):
            z = torch.zeros_like(x)
            _run(f"add.{arch}.{check}", lambda: kern.options(check=check)[None, 3](x, y, z), [z.numpy()], results)
        z = torch.zeros_like(x)
        _run(f"add.{arch}.untimed", lambda: kern.options(timing=False)[None, 3](x, y, z), [z.numpy()], results)
        xs = torch.from_numpy(rng.standard_normal((200, 96)).astype(np.float16))
        _run(f"softmax.{arch}", lambda: None, [softmax.softmax(xs, arch, 3).numpy()], results)
        results[f"softmax.{arch}"]["report"] = report_digest(softmax.get_softmax_kernel(arch).last_report)
        g = torch.from_numpy(rng.standard_normal(96).astype(np.float16))
        _run(f"rmsnorm.{arch}", lambda: None, [rmsnorm.rmsnorm(xs, g, arch=arch, block_dim=3).numpy()], results)
        results[f"rmsnorm.{arch}"]["report"] = report_digest(rmsnorm.get_rmsnorm_kernel(arch).last_report)
        for out in (pl.DT_FP32, pl.DT_FP16):
            a = rng.standard_normal((300, 520)).astype(np.float16)
            b = rng.standard_normal((520, 200)).astype(np.float16)
            c = np.zeros((300, 200), out.np_dtype)
            _run(f"matmul.{arch}.{out.name}", lambda: matmul.make_matmul(arch, out)[None, 4](a, b, c), [c], results)
        o, _, rep = matmul_softmax.run(arch, 200, 96, 3)
        results[f"matmul_softmax.{arch}"] = {"out": _arrays(o), "report": report_digest(rep)}
        for causal in (False, True):
            for preload in (0, 1, 2):
                shape = (1, 2, 256, 128)
                q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
                o = np.zeros_like(q)
                ws = fa.workspaces(4, 128, preload)
                kern = fa.make_flash_attention(arch, 128, causal, preload, check="raise")
                _run(f"fa.{arch}.causal{int(causal)}.preload{preload}",
                     lambda: kern[None, 4](q, k, v, o, fa.causal_mask(), *ws), [o, *ws], results)
    _vf_cases(rng, results)
    with tempfile.TemporaryDirectory() as tmp:
        kern = pl.jit(add.add_kernel.fn, trace=tmp)
        x = torch.from_numpy(rng.standard_normal((256, 256)).astype(np.float16))
        z = torch.zeros_like(x)
        _run("add.trace", lambda: kern[None, 2](x, x, z), [z.numpy()], results)
        results["add.trace"]["files"] = {p.name: _sha(p.read_bytes()) for p in sorted(Path(tmp).rglob("*"))
                                         if p.is_file()}
    return results


def _vf_cases(rng, results: dict) -> None:
    """a5's VF paths: the row softmax benchmark kernel (tail rows and columns, MERGING chains) and
    ``vf_accumulators`` (ZEROING max / sum chains read only after their loops)."""
    import torch
    import vf_softmax
    x = torch.from_numpy((rng.standard_normal((100, 1000)) * 3).astype(np.float32))
    y = torch.zeros_like(x)
    kern = pl.jit(vf_softmax.vf_kernel, arch="a5", auto_mutex=True)
    _run("vf_softmax.a5", lambda: kern[None, 3](x, y), [y.numpy()], results)
    a = torch.from_numpy(rng.standard_normal((64, 64)).astype(np.float32))
    a[3, 5], a[7, 9], a[9, 1] = float("nan"), -0.0, 0.0
    o = torch.zeros((4, 64), dtype=torch.float32)
    _run("vf_accumulators.a5", lambda: pl.jit(vf_accumulators, arch="a5")[None, 1](a, o), [o.numpy()], results)


@pl.vector_function
def _accumulate(ta, to):
    """The max (carried operand first) and the sum (carried second) of the even and of the odd rows:
    chains over the loop, read after it."""
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    mx0 = vf.full(-3.0e38, full, dtype=pl.DT_FP32)
    mx1 = vf.full(-3.0e38, full, dtype=pl.DT_FP32)
    s0 = vf.full(0.0, full, dtype=pl.DT_FP32)
    s1 = vf.full(0.0, full, dtype=pl.DT_FP32)
    for i in pl.range(0, 32):
        x0 = vf.load_align(ta, i * 128)
        x1 = vf.load_align(ta, i * 128 + 64)
        mx0 = vf.max(mx0, x0, full)
        mx1 = vf.max(mx1, x1, full)
        s0 = vf.add(x0, s0, full)
        s1 = vf.add(x1, s1, full)
    vf.store_align(to, mx0, full, 0)
    vf.store_align(to, mx1, full, 64)
    vf.store_align(to, s0, full, 128)
    vf.store_align(to, s1, full, 192)


def vf_accumulators(a: pl.Tensor[[64, 64], pl.DT_FP32], o: pl.Tensor[[4, 64], pl.DT_FP32]):
    """One VF call between a load and a store, ordered by auto_mutex (tile groups with mutex ids)."""
    vec = pl.MemorySpace.Vec
    ins = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=vec),
                             addrs=[0], mutex_ids=[0])
    outs = pl.make_tile_group(type=pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=vec),
                              addrs=[64 * 64 * 4], mutex_ids=[1])
    with pl.section_vector():
        ta, to = ins.next(), outs.next()
        pl.load(ta, a, [0, 0])
        _accumulate(ta, to)
        pl.store(o, to, [0, 0])


if __name__ == "__main__":
    print(json.dumps(cases(), indent=1, sort_keys=True))
