"""Fingerprints of the example kernels on the simulator: one SHA-256 per run of its outputs and of its
launch report (cycles, per-block and per-pipe busy, bytes, faults). A change that is meant to make the
simulator faster without changing what it computes must leave every line the same:

    python benchmarks/sim_fingerprint.py > after.json
    git archive <base> | tar -x -C /tmp/base && PYTHONPATH=/tmp/base python benchmarks/sim_fingerprint.py > before.json
    diff before.json after.json

Shapes are small (the whole set runs in well under a minute on one core); runs cover both archs,
edge tiles, several waves, the three check modes, timing off, causal and non-causal flash attention
at three preload depths, and a trace (whose files are fingerprinted too).
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))


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
    import pypto_pro.language as pl
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
    with tempfile.TemporaryDirectory() as tmp:
        kern = pl.jit(add.add_kernel.fn, trace=tmp)
        x = torch.from_numpy(rng.standard_normal((256, 256)).astype(np.float16))
        z = torch.zeros_like(x)
        _run("add.trace", lambda: kern[None, 2](x, x, z), [z.numpy()], results)
        results["add.trace"]["files"] = {p.name: _sha(p.read_bytes()) for p in sorted(Path(tmp).rglob("*"))
                                         if p.is_file()}
    return results


if __name__ == "__main__":
    print(json.dumps(cases(), indent=1, sort_keys=True))
