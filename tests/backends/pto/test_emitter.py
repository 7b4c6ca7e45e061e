"""PTO-ISA C++ backend: structure of the emitted code for the examples, and (when PTO_ISA_ROOT
points at a PTO-ISA checkout) a build + run on PTO-ISA's CPU model compared with the simulator."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.ir.nodes import Assign, For, SyncOp, TileOp, walk_stmts
from pypto_pro.ir.printer import sync_str

from example_modules import load_example

add, matmul, rmsnorm, softmax = (load_example(n) for n in ("add", "matmul", "rmsnorm", "softmax"))

SYNC_CALL = re.compile(r"^\s*(set_flag|wait_flag|pipe_barrier|get_buf|rls_buf|ffts_cross_core_sync|wait_flag_dev|"
                       r"set_intra_block|wait_intra_block)\(")


def _kernel(name: str):
    if name.startswith("add_"):
        return pl.jit(add.add_kernel.fn, arch=name.split("_")[1])
    if name.startswith("softmax_"):
        return softmax.make_softmax_kernel(name.split("_")[1])
    if name.startswith("rmsnorm_"):
        return rmsnorm.make_rmsnorm_kernel(name.split("_")[1])
    if name.startswith("matmul_"):
        return matmul.make_matmul(name.split("_")[1])
    raise KeyError(name)


EXPECTED_INSTRUCTIONS = {
    "add": ["TLOAD", "TADD", "TSTORE"],
    "softmax": ["TLOAD", "TCVT", "TROWMAX", "TROWEXPANDSUB", "TEXP", "TROWSUM", "TROWEXPANDDIV", "TSTORE"],
    "rmsnorm": ["TLOAD", "TCVT", "TMUL", "TROWSUM", "TDIVS", "TADDS", "TSQRT", "TROWEXPANDDIV", "TCOLEXPANDMUL",
                "TSTORE"],
    "matmul": ["TLOAD", "TEXTRACT", "TMATMUL", "TMATMUL_ACC", "TSTORE"],
}
KERNELS = ["add_a2a3", "add_a5", "softmax_a2a3", "softmax_a5", "rmsnorm_a2a3", "rmsnorm_a5", "matmul_a2a3",
           "matmul_a5"]


def _emit(name):
    k = _kernel(name) if isinstance(name, str) else name
    cp = k.compile()
    return k, cp, emit_kernel(cp.programs, k.name, k.arch)


@pytest.mark.parametrize("name", KERNELS)
def test_emitted_structure(name):
    k, cp, out = _emit(name)
    src = out["kernel.cpp"]
    lines = src.splitlines()
    assert "#include <pto/pto-inst.hpp>" in src
    assert "#error" not in src.replace("#if !defined(__CPU_SIM)\n#error", "")  # nothing unsupported here
    progs = list(cp.programs.values())
    # one TASSIGN per ring slot, at the user's address
    buffers = [b for p in progs for b in p.buffers]
    assert sum(1 for line in lines if "TASSIGN(" in line) == sum(b.depth for b in buffers)
    for b in buffers:
        for a in b.addrs:
            assert re.search(rf"TASSIGN\({b.name}(\[\d+\])?, 0x{a:05x}\)", src), (b.name, hex(a))
    # each program's engine guard; GlobalTensor type per tensor parameter
    for p in progs:
        guard = "__DAV_CUBE__" if p.kind.value == "cube" else "__DAV_VEC__"
        assert f"#if defined({guard}) || defined(__CPU_SIM)" in src
    for t in progs[0].tensor_params():
        assert re.search(rf"using {t.name}_gm_t = GlobalTensor<", src)
    # the instructions
    for inst in EXPECTED_INSTRUCTIONS[name.split("_")[0]]:
        assert re.search(rf"\b{inst}\(", src), inst
    # sync lines match the lowered programs' SyncOps one to one, in order
    emitted = [line.split("//", 1)[1].split("  @ ")[0].strip() for line in lines if SYNC_CALL.match(line)]
    expected = [sync_str(s).strip() for p in progs for s in walk_stmts(p.body) if isinstance(s, SyncOp)]
    assert emitted == expected
    # file:line comments back to the kernel source for control flow and instructions
    for p in progs:
        for s in walk_stmts(p.body):
            if isinstance(s, (Assign, For, TileOp)) and s.loc is not None:
                assert f"{os.path.basename(s.loc.path)}:{s.loc.line}" in src
    assert any(re.search(r"^\s*for \(.*\) \{  // \w+\.py:\d+$", line) for line in lines)
    launcher = out["launcher.cpp"]
    assert re.search(rf'extern "C" int launch_{k.name}\(uint32_t block_dim, void\* stream, ', launcher)
    assert "LaunchKernelMultiCore" in launcher and "<<<block_dim, nullptr, stream>>>" in launcher


def test_a5_uses_buffer_ids_and_a2a3_uses_flags():
    _, _, a5 = _emit("add_a5")
    _, _, a2 = _emit("add_a2a3")
    assert "get_buf(PIPE_MTE2, a_db_slot, 0);" in a5["kernel.cpp"]
    assert "rls_buf(PIPE_V, (30 + c_db_slot), 0);" in a5["kernel.cpp"]
    assert "set_flag(PIPE_MTE2, PIPE_V, static_cast<event_t>(a_db_slot));" in a2["kernel.cpp"]
    assert "get_buf" not in a2["kernel.cpp"]


def test_mixed_kernel_has_both_engines_and_cross_core_flags():
    matmul_softmax = load_example("matmul_softmax")
    for arch, xset in (("a2a3", "ffts_cross_core_sync("), ("a5", "set_intra_block(")):
        k = matmul_softmax.make_matmul_softmax(arch)
        cp = k.compile()
        src = emit_kernel(cp.programs, k.name, k.arch)["kernel.cpp"]
        assert "#if defined(__DAV_CUBE__) || defined(__CPU_SIM)" in src
        assert "#if defined(__DAV_VEC__) || defined(__CPU_SIM)" in src
        assert xset in src
        assert "mixed Cube + Vector kernel" in src  # the CPU model cannot run it: an #error says why


# ---- build and run on PTO-ISA's CPU model -------------------------------------------------------

def _compiler() -> str | None:
    for cxx in ("clang++-19", "clang++"):
        path = shutil.which(cxx)
        if path:
            return path
    return None


def _host_main(launcher: str, kernel, arrays: dict[str, np.ndarray], block_dim: int, scalars: dict) -> str:
    """A main() that reads each tensor from <dir>/<name>.bin, launches, writes <dir>/<name>.out.bin."""
    proto = re.search(r'extern "C" int (launch_\w+)\((.*)\)\n\{', launcher)
    assert proto
    fn, params = proto.group(1), proto.group(2)
    args = []
    for p in params.split(", "):
        pname = p.split()[-1].lstrip("*")
        if pname == "block_dim":
            args.append(str(block_dim))
        elif pname == "stream":
            args.append("nullptr")
        elif pname in arrays:
            args.append(f"{pname}.data()")
        elif re.fullmatch(r"(\w+)_dim(\d+)", pname):
            t, axis = re.fullmatch(r"(\w+)_dim(\d+)", pname).groups()
            args.append(str(arrays[t].shape[int(axis)]))
        else:
            v = scalars[pname]
            args.append(repr(float(v)) + "f" if "float" in p else ("true" if v else "false") if isinstance(v, bool)
                        else str(v))
    reads = "\n".join(f'    auto {n} = rd(dir + "/{n}.bin", {a.nbytes});' for n, a in arrays.items())
    writes = "\n".join(f'    wr(dir + "/{n}.out.bin", {n});' for n in arrays)
    return f"""#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
extern "C" int {fn}({params});
static std::vector<char> rd(const std::string& p, size_t n)
{{
    std::vector<char> b(n);
    FILE* f = std::fopen(p.c_str(), "rb");
    if (!f || std::fread(b.data(), 1, n, f) != n) {{ std::fprintf(stderr, "cannot read %s\\n", p.c_str()); std::exit(2); }}
    std::fclose(f);
    return b;
}}
static void wr(const std::string& p, const std::vector<char>& b)
{{
    FILE* f = std::fopen(p.c_str(), "wb");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
}}
int main(int argc, char** argv)
{{
    const std::string dir = argc > 1 ? argv[1] : ".";
{reads}
    {fn}({", ".join(args)});
{writes}
    std::printf("ran {fn}\\n");
    return 0;
}}
"""


LAST_RUN: dict[str, str] = {}  # the last CPU-model run's stdout (device prints)


def _run_on_pto_cpu(tmp_path: Path, name, arrays: dict[str, np.ndarray], block_dim: int, scalars=None):
    root = os.environ["PTO_ISA_ROOT"]
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no clang++ (PTO-ISA's CPU model needs C++20 clang; apt-get install -y clang-19)")
    k, cp, out = _emit(name)
    scalars = scalars or {}
    # the simulator's answer
    sim_arrays = {n: a.copy() for n, a in arrays.items()}
    k[None, block_dim](*sim_arrays.values(), *scalars.values())
    # PTO-ISA's CPU model
    for f, text in out.items():
        (tmp_path / f).write_text(text)
    (tmp_path / "main.cpp").write_text(_host_main(out["launcher.cpp"], k, arrays, block_dim, scalars))
    for n, a in arrays.items():
        a.tofile(tmp_path / f"{n}.bin")
    exe = tmp_path / "run"
    cmd = [cxx, "-std=c++20", "-O1", "-D__CPU_SIM", f"-I{root}/include", "-Wno-macro-redefined",
           "-Wno-ignored-attributes", str(tmp_path / "main.cpp"), str(tmp_path / "kernel.cpp"),
           str(tmp_path / "launcher.cpp"), "-o", str(exe), "-lpthread"]
    build = subprocess.run(cmd, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    LAST_RUN["stdout"] = run.stdout
    got = {n: np.fromfile(tmp_path / f"{n}.out.bin", a.dtype).reshape(a.shape) for n, a in arrays.items()}
    return got, sim_arrays


needs_pto = pytest.mark.skipif(not os.environ.get("PTO_ISA_ROOT"),
                               reason="set PTO_ISA_ROOT to a PTO-ISA checkout to build and run the emitted "
                                      "C++ on PTO-ISA's CPU model (-D__CPU_SIM)")


@needs_pto
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_add_runs_on_pto_isa_cpu_model(tmp_path, arch):
    rng = np.random.default_rng(0)
    m, n = 384, 640   # 3 x 5 tiles of 128 x 128 over 2 blocks
    x = rng.standard_normal((m, n)).astype(np.float16)
    y = rng.standard_normal((m, n)).astype(np.float16)
    z = np.zeros((m, n), np.float16)
    got, sim = _run_on_pto_cpu(tmp_path, f"add_{arch}", {"x": x, "y": y, "z": z}, block_dim=2)
    assert np.array_equal(got["z"], sim["z"])
    assert np.array_equal(got["z"], x + y)


@needs_pto
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_softmax_runs_on_pto_isa_cpu_model(tmp_path, arch):
    rng = np.random.default_rng(1)
    m, n = 37, 1000   # a partial last row tile and a partial row
    x = (rng.standard_normal((m, n)) * 3).astype(np.float16)
    y = np.zeros((m, n), np.float16)
    got, sim = _run_on_pto_cpu(tmp_path, f"softmax_{arch}", {"x": x, "y": y}, block_dim=2)
    diff = np.abs(got["y"].astype(np.float32) - sim["y"].astype(np.float32))
    assert diff.max() <= 1e-3, diff.max()


@needs_pto
def test_rmsnorm_runs_on_pto_isa_cpu_model(tmp_path):
    rng = np.random.default_rng(2)
    m, n = 20, 700
    x = rng.standard_normal((m, n)).astype(np.float16)
    gamma = rng.standard_normal((n,)).astype(np.float16)
    y = np.zeros((m, n), np.float16)
    got, sim = _run_on_pto_cpu(tmp_path, "rmsnorm_a2a3", {"x": x, "gamma": gamma, "y": y}, block_dim=2,
                               scalars={"eps": 1e-6})
    diff = np.abs(got["y"].astype(np.float32) - sim["y"].astype(np.float32))
    assert diff.max() <= 2e-3, diff.max()


@needs_pto
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_matmul_runs_on_pto_isa_cpu_model(tmp_path, arch):
    rng = np.random.default_rng(3)
    m, k, n = 300, 520, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    got, sim = _run_on_pto_cpu(tmp_path, f"matmul_{arch}", {"a": a, "b": b, "c": c}, block_dim=3)
    diff = np.abs(got["c"] - sim["c"])
    assert diff.max() <= 1e-3, diff.max()


# ---- control flow and typed scalars ---------------------------------------------------------------

CF_TILE = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def control_flow_kernel(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
                        stop: pl.DT_INT32, skip: pl.DT_INT32):
    g = pl.make_tile_group(type=CF_TILE, addrs=0x0, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=CF_TILE, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        i: pl.DT_INT64 = 0
        while i < x.shape[0] // 16:
            k = i
            i = i + 1
            if k % 4 == skip:
                continue
            if k * 3 // 2 >= stop:
                break
            t, u = g.next(), h.next()
            pl.load_tile(t, x, [k, 0])
            pl.muls(u, t, min(stop, 100) / 4)       # INT32 / INT64 -> FP32
            pl.store_tile(z, u, [k, 0])
        for j in pl.range(0, 2, 1):
            if j == stop - 1:
                return
        t = g.next()
        pl.load_tile(t, x, [0, 0])
        pl.adds(t, t, -7 // 2 + stop % -3)           # C division and remainder
        pl.store_tile(z, t, [0, 0])


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_control_flow_emits_loops_jumps_and_casts(arch):
    k = pl.jit(control_flow_kernel, arch=arch)
    _, cp, out = _emit(k)
    cpp = out["kernel.cpp"]
    for text in ("while (", "break;", "continue;", "return;", "static_cast<int64_t>(stop)"):
        assert text in cpp, text
    assert "pp_floordiv" not in cpp.split("// ---- vector program")[1]  # '//' is C '/', as the real emits


@needs_pto
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("stop, skip", [(7, 1), (1, 3), (40, 0)])
def test_control_flow_runs_on_pto_isa_cpu_model(tmp_path, arch, stop, skip):
    x = np.random.default_rng(4).standard_normal((8 * 16, 64)).astype(np.float32)
    z = np.zeros_like(x)
    k = pl.jit(control_flow_kernel, arch=arch)
    got, sim = _run_on_pto_cpu(tmp_path, k, {"x": x, "z": z}, block_dim=1, scalars={"stop": stop, "skip": skip})
    assert np.array_equal(got["z"], sim["z"])


# ---- the fixpipe's per-channel quantisation ------------------------------------------------------

QT = 64


def per_channel_kernel(a: pl.Tensor[[QT, QT], pl.DT_FP16], b: pl.Tensor[[QT, QT], pl.DT_FP16],
                       fp_params: pl.Tensor[[1, QT], pl.DT_INT64], out: pl.Tensor[[QT, QT], pl.DT_INT8]):
    Mat, Scaling = pl.MemorySpace.Mat, pl.MemorySpace.Scaling
    a1 = pl.make_tile_group(type=pl.TileType([QT, QT], pl.DT_FP16, Mat), addrs=0, mutex_ids=[0])[0]
    b1 = pl.make_tile_group(type=pl.TileType([QT, QT], pl.DT_FP16, Mat), addrs=0x8000, mutex_ids=[1])[0]
    f1 = pl.make_tile_group(type=pl.TileType([1, QT], pl.DT_INT64, Mat, layout=pl.ND), addrs=0x10000,
                            mutex_ids=[2])[0]
    xa = pl.make_tile_group(type=pl.TileType([QT, QT], pl.DT_FP16, pl.MemorySpace.Left), addrs=0, mutex_ids=[3])[0]
    xb = pl.make_tile_group(type=pl.TileType([QT, QT], pl.DT_FP16, pl.MemorySpace.Right), addrs=0,
                            mutex_ids=[4])[0]
    acc = pl.make_tile_group(type=pl.TileType([QT, QT], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0, mutex_ids=[5])[0]
    fpt = pl.make_tile_group(type=pl.TileType([1, QT], pl.DT_INT64, Scaling), addrs=0, mutex_ids=[6])[0]
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.load(f1, fp_params, [0, 0])
        pl.move(xa, a1)
        pl.move(xb, b1)
        pl.matmul(acc, xa, xb)
        pl.move(fpt, f1)
        pl.store(out, acc, [0, 0], scale=fpt)


def test_per_channel_store_emits_tstore_fp():
    _, _, out = _emit(pl.jit(per_channel_kernel, auto_mutex=True, arch="a5"))
    assert "TSTORE_FP(gm, " in out["kernel.cpp"]


@needs_pto
def test_per_channel_store_runs_on_pto_isa_cpu_model(tmp_path):
    """The quant arithmetic (VQF322B8_PRE: M1 scale, round half to even, bit 46) matches PTO-ISA's CPU
    model. One difference is deliberate: the CPU model's TSTORE_FP picks the quant word by *row* for a
    column-major (Acc) tile (``scalars[isRowMajor ? col : row]``), while the hardware's deqTensor (FPC)
    scales per output channel -- per column, as the real frontend documents and its on-chip tests
    check; the simulator scales per column, so the CPU model's bytes are compared with a per-row
    reference here."""
    from pypto_pro.backends.sim import fixpipe
    import struct
    rng = np.random.default_rng(8)
    a = rng.integers(-3, 4, (QT, QT)).astype(np.float16)
    b = rng.integers(-3, 4, (QT, QT)).astype(np.float16)
    scales = [0.05 + 0.037 * i for i in range(QT)]
    fp = np.array([[(1 << 46) | struct.unpack("<I", struct.pack("<f", s))[0] for s in scales]], np.int64)
    out = np.zeros((QT, QT), np.int8)
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(per_channel_kernel, auto_mutex=True, arch="a5"),
                               {"a": a, "b": b, "fp_params": fp, "out": out}, block_dim=1)
    acc = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32)
    words = fp.view(np.uint64)[0]
    np.testing.assert_array_equal(sim["out"], fixpipe.quantize(acc, np.int8, words, False, vector=True))
    np.testing.assert_array_equal(got["out"], fixpipe.quantize(acc, np.int8, words[:, None], False, vector=True))
    assert np.abs(sim["out"].astype(int)).max() > 10  # the scales did something
