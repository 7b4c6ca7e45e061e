"""Flash attention (examples/flash_attention.py) against torch's scaled_dot_product_attention on both
arch models: causal and not, head_dim 64 and 128, sequence lengths that are not tile multiples,
preload 0, 1 and 2; every launch race/deadlock-clean (check="raise"); the generated pipeline file
compiles on its own."""
import importlib.util

import numpy as np
import pytest

from example_modules import load_example

fa = load_example("flash_attention")

# fp16 output of an fp32 computation: torch (fp32 math) and the kernel (fp32 softmax, fp16 P for
# the second matmul, as flash attention on the chip does) differ by the fp16 rounding of P (~2^-11
# relative) accumulated over the keys: well under 2e-3 absolute for unit-variance inputs.
ATOL = 2e-3


def _qkv(b, n, s, d, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((b, n, s, d)).astype(np.float16) for _ in range(3)]


CASES = [  # (arch, seq, head_dim, causal, preload, blocks)
    ("a5", 64, 64, False, 1, 1), ("a2a3", 64, 64, False, 1, 1),
    ("a5", 200, 64, True, 2, 2), ("a2a3", 200, 64, True, 2, 2),
    ("a5", 130, 128, False, 0, 3), ("a2a3", 130, 128, True, 1, 3),
    ("a5", 1, 64, True, 1, 1), ("a2a3", 65, 128, False, 2, 4),
]


@pytest.mark.parametrize("arch,seq,dim,causal,preload,blocks", CASES)
def test_matches_torch_sdpa(arch, seq, dim, causal, preload, blocks):
    q, k, v = _qkv(1, 2, seq, dim, seed=seq + dim)
    o, report = fa.run(q, k, v, arch, causal, preload=preload, blocks=blocks)
    ref = fa.reference(q, k, v, causal)
    np.testing.assert_allclose(o.astype(np.float32), ref.astype(np.float32), atol=ATOL, rtol=0)
    assert report.faults == []


def test_preload_overlaps_cube_and_vector():
    q, k, v = _qkv(1, 2, 512, 64)
    reports = {p: fa.run(q, k, v, "a5", False, preload=p, blocks=2)[1] for p in (0, 1)}
    times = {p: r.cycles for p, r in reports.items()}
    vector = reports[1].pipe_busy["AIV0.V"] / 2  # one Vector core's softmax work per block (2 blocks)
    # on a5 the softmax (one vector function per tile op) is the longer stage: without preload the
    # Cube's work adds to it; with preload the Cube runs QK ahead and the kernel takes the Vector time
    assert times[0] > 1.08 * vector and times[1] < 1.02 * vector, (times, vector)
    assert times[1] < 0.95 * times[0], times


def test_generated_pipeline_compiles_on_its_own(tmp_path):
    kern = fa.make_flash_attention("a5", 64, True, 2)
    kern.build_dir = str(tmp_path)
    kern.compile()
    path = tmp_path / "flash_attention" / "pipeline_generated.py"
    spec = importlib.util.spec_from_file_location("fa_generated", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    q, k, v = _qkv(1, 1, 130, 64)
    o = np.zeros_like(q)
    mod.flash_attention[None, 2](q, k, v, o, fa.causal_mask(), *fa.workspaces(2, 64, 2))
    np.testing.assert_allclose(o.astype(np.float32), fa.reference(q, k, v, True).astype(np.float32), atol=ATOL)


def test_trace_shows_cube_and_vector_overlapping(tmp_path):
    import json
    q, k, v = _qkv(1, 1, 256, 64)
    kern = fa.make_flash_attention("a5", 64, False, 1).options(trace=str(tmp_path))
    o = np.zeros_like(q)
    kern[None, 1](q, k, v, o, fa.causal_mask(), *fa.workspaces(1, 64, 1))
    events = json.loads((tmp_path / "flash_attention.trace.json").read_text())["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = [e for e in events if e["ph"] == "X"]
    cube = [(e["ts"], e["ts"] + e["dur"]) for e in slices if names[(e["pid"], e["tid"])] == "AIC.M"]
    vec = [(e["ts"], e["ts"] + e["dur"]) for e in slices if names[(e["pid"], e["tid"])] == "AIV0.V"]
    overlap = sum(max(0.0, min(a1, b1) - max(a0, b0)) for a0, a1 in cube for b0, b1 in vec)
    assert cube and vec and overlap > 0.5 * sum(a1 - a0 for a0, a1 in cube)  # most Cube work runs beside softmax
