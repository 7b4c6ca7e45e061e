"""The machine models as data: every number has a source, the a5 numbers are the 950's, and (where the
reference checkouts exist) they match the files they cite."""
from __future__ import annotations

import configparser
import csv
import dataclasses
from pathlib import Path

import pytest

from pypto_pro.arch import A2A3, A5, A5_VARIANTS, DEFAULT_VARIANT
from pypto_pro.arch.a5 import VARIANTS
from pypto_pro.arch.costs import LinearCost
from pypto_pro.arch.describe import describe
from pypto_pro.arch.model import ArchModel, Sourced
from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.language.enums import MemorySpace
from pypto_pro.ops import INSTRUCTIONS

COST = {name: instr.cost for name, instr in INSTRUCTIONS.items()}  # each instruction's declared cost

MODELS = {"a2a3": A2A3, **{f"a5:{k}": v for k, v in A5_VARIANTS.items()}}
PYPTO_CONFIGS = Path("/work/ref/pypto/framework/src/platform/parser/simulation_platform/platform_config")
PTO_A5_CSV = Path("/work/ref/pto-isa/include/pto/costmodel/a5/formula_costmodel/formula_params.csv")


def _sourced_values(a: ArchModel) -> list[tuple[str, Sourced]]:
    out = [(f.name, getattr(a, f.name)) for f in dataclasses.fields(a) if isinstance(getattr(a, f.name), Sourced)]
    out += [(f"cost.{k}", v) for k, v in a.cost.items()]
    if a.l2 is not None:
        out += [(f"l2.{f.name}", getattr(a.l2, f.name)) for f in dataclasses.fields(a.l2)]
    return out


@pytest.mark.parametrize("name", MODELS)
def test_every_number_has_a_source(name):
    a = MODELS[name]
    items: list[tuple[str, str, bool]] = [(k, v.source, v.assumed) for k, v in _sourced_values(a)]
    items += [(f"memory {s.name}", m.source, m.assumed) for s, m in a.memories.items()]
    items += [(f"path {p}", b.source, b.assumed) for p, b in a.paths.items()]
    items += [(f"vector {op}", c.source, c.assumed) for op, c in a.vector_costs.items()]
    items += [(f"vector {k}", c.source, c.assumed) for k, c in a.vector_costs_by_width.items()]
    assert len(items) > 40
    for what, source, assumed in items:
        assert source.strip(), f"{name}: {what} has no source"
        assert assumed == ("assumed" in source), f"{name}: {what}: assumed={assumed} but source says {source!r}"


@pytest.mark.parametrize("name", MODELS)
def test_every_on_chip_memory_space_is_modeled(name):
    spaces = set(MODELS[name].memories)
    assert spaces == set(MemorySpace) - {MemorySpace.DDR}


def test_a5_is_the_950_not_a2a3():
    assert A5 is A5_VARIANTS[DEFAULT_VARIANT] and A5.soc == "Ascend950PR_9589" and A5.name == "a5"
    assert A5.clock_mhz.value == 1650 and not A5.clock_mhz.assumed
    assert (A5.cube_cores.value, A5.vector_cores) == (32, 64) and not A5.cube_cores.assumed
    caps = {s: m.capacity for s, m in A5.memories.items()}
    assert caps == {MemorySpace.Vec: 253952, MemorySpace.Mat: 524288, MemorySpace.Left: 65536,
                    MemorySpace.Right: 65536, MemorySpace.Acc: 262144, MemorySpace.Bias: 4096,
                    MemorySpace.Scaling: 4096, MemorySpace.ScaleLeft: 4096, MemorySpace.ScaleRight: 4096}
    aligns = {s: m.alignment for s, m in A5.memories.items()}
    assert aligns[MemorySpace.Vec] == aligns[MemorySpace.Mat] == 32
    assert aligns[MemorySpace.Left] == aligns[MemorySpace.Right] == 512 and aligns[MemorySpace.Acc] == 64
    assert aligns[MemorySpace.ScaleLeft] == aligns[MemorySpace.ScaleRight] == 32
    assert A2A3.memories[MemorySpace.ScaleLeft].capacity == 0  # A2/A3 has no MX scale buffers
    assert "Mat->GM" in A2A3.paths and "Mat->GM" not in A5.paths  # a5 has no L1 -> GM path
    assert A5.event_ids_per_pipe_pair.value == 16 and A2A3.event_ids_per_pipe_pair.value == 8


def test_variants_differ_only_where_their_configs_do():
    cores = {k: (int(v.cube_cores.value), v.vector_cores) for k, v in A5_VARIANTS.items()}
    assert cores == {"950PR_9579": (28, 56), "950PR_9589": (32, 64), "950DT_9572": (28, 56),
                     "950DT_9582": (32, 64), "950DT_9581": (32, 64), "950DT_9581X": (32, 64)}
    caps = {k: v.gm_bandwidth_cap_gb_s.value for k, v in A5_VARIANTS.items()}  # type: ignore[union-attr]
    assert caps["950PR_9589"] == pytest.approx(64 * 16 * 1.65) and caps["950DT_9581"] == pytest.approx(64 * 40 * 1.65)
    for v in A5_VARIANTS.values():
        assert v.memories == A5.memories and v.paths == A5.paths and v.vector_costs == A5.vector_costs


def test_describe_prints_every_number_with_its_source():
    text = describe(A5)
    assert "Ascend950PR_9589" in text and "253952 / 32" in text and "950*.ini [AICoreSpec] ub_size" in text
    assert "TADD fp32/fp16" in text and "(assumed) assumed from a2a3" in text
    assert "DAV_3510" in text


# ---- the cited files say what the tables say (skipped where the checkouts are absent) -------------------


def _ini(name: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.read(PYPTO_CONFIGS / name)
    return cp


@pytest.mark.skipif(not PYPTO_CONFIGS.is_dir(), reason="hicann/pypto checkout not at /work/ref/pypto")
@pytest.mark.parametrize("variant", VARIANTS)
def test_a5_variant_matches_its_platform_config(variant):
    v, a = VARIANTS[variant], A5_VARIANTS[variant]
    ini = _ini(v.ini)
    spec, soc, rates = ini["AICoreSpec"], ini["SoCInfo"], ini["AICoreMemoryRates"]
    assert ini["version"]["SoC_version"] == a.soc and ini["version"]["NpuArch"] == a.npu_arch.removeprefix("DAV_")
    assert int(spec["cube_freq"]) == int(ini["VectorCoreSpec"]["vec_freq"]) == a.clock_mhz.value
    assert int(soc["cube_core_cnt"]) == int(soc["ai_core_cnt"]) == a.cube_cores.value
    assert int(soc["vector_core_cnt"]) == a.vector_cores
    assert int(soc["l2_size"]) == a.l2.capacity.value  # type: ignore[union-attr]
    assert int(ini["VectorCoreMemoryRates"]["l2_rate"]) == a.l2.hit_bytes_per_cycle.value  # type: ignore[union-attr]
    ddr = int(ini["VectorCoreMemoryRates"]["ddr_rate"])
    assert a.gm_bandwidth_cap_gb_s.value == pytest.approx(ddr * a.vector_cores * a.clock_mhz.value / 1000)  # type: ignore[union-attr]
    for space, key in ((MemorySpace.Vec, "ub_size"), (MemorySpace.Mat, "l1_size"), (MemorySpace.Left, "l0_a_size"),
                       (MemorySpace.Right, "l0_b_size"), (MemorySpace.Acc, "l0_c_size"), (MemorySpace.Bias, "bt_size"),
                       (MemorySpace.Scaling, "fb0_size")):
        assert int(spec[key]) == a.memories[space].capacity, key
    assert int(spec["vector_reg_width"]) == a.vector_repeat_bytes.value
    per_cycle = {p: b.gib_per_s * 2**30 / (a.clock_mhz.value * 1e6) for p, b in a.paths.items()}
    for path, key in (("Mat->Left", "l1_to_l0_a_rate"), ("Mat->Right", "l1_to_l0_b_rate"),
                      ("Acc->Vec", "l0_c_to_ub_rate"), ("Vec->Mat", "ub_to_l1_rate")):
        assert per_cycle[path] == pytest.approx(int(rates[key])), path


@pytest.mark.skipif(not PYPTO_CONFIGS.is_dir(), reason="hicann/pypto checkout not at /work/ref/pypto")
@pytest.mark.parametrize("ini_name", ["A2A3.ini", "910PR_9363.ini"])
def test_a2a3_matches_both_the_a2_and_the_a3_config(ini_name):
    ini = _ini(ini_name)
    spec, soc = ini["AICoreSpec"], ini["SoCInfo"]
    assert int(spec["cube_freq"]) == A2A3.clock_mhz.value and int(soc["cube_core_cnt"]) == A2A3.cube_cores.value
    assert int(soc["vector_core_cnt"]) == A2A3.vector_cores and int(soc["l2_size"]) == A2A3.l2.capacity.value  # type: ignore[union-attr]
    for space, key in ((MemorySpace.Vec, "ub_size"), (MemorySpace.Mat, "l1_size"), (MemorySpace.Left, "l0_a_size"),
                       (MemorySpace.Right, "l0_b_size"), (MemorySpace.Acc, "l0_c_size"), (MemorySpace.Bias, "bt_size"),
                       (MemorySpace.Scaling, "fb0_size")):
        assert int(spec[key]) == A2A3.memories[space].capacity, key


@pytest.mark.skipif(not PTO_A5_CSV.is_file(), reason="PTO-ISA checkout not at /work/ref/pto-isa")
def test_a5_vector_costs_match_pto_isa_formula_params():
    rows = {}
    with PTO_A5_CSV.open() as f:
        for r in csv.DictReader(f):
            if r["tail_kind"] == "full" and r["op_params"] in ("", "default", "CAST_RINT_SAT_ON_normal"):
                rows[(r["op"], r["src_dtype"], r["dst_dtype"], r["shape_path"])] = tuple(
                    float(r[f"param{i}"]) for i in range(3))
    ours = {("add", 4): "TADD", ("sub", 4): "TSUB", ("mul", 4): "TMUL", ("divs", 4): "TDIVS", ("mins", 4): "TMINS",
            ("neg", 4): "TNEG", ("exp", 4): "TEXP", ("sqrt", 4): "TSQRT", ("rsqrt", 4): "TRSQRT",
            ("recip", 4): "TRECIP", ("exp", 2): "TEXP", ("sqrt", 2): "TSQRT", ("rsqrt", 2): "TRSQRT",
            ("divs", 2): "TDIVS", ("recip", 2): "TRECIP", ("add", 2): "TADD", ("mul", 2): "TMUL"}
    for (op, width), pto in ours.items():
        dtype = "fp32" if width == 4 else "fp16"
        c: LinearCost = A5.vector_cost(op, width)
        d1, d2 = rows[(pto, dtype, "none", "1D")], rows[(pto, dtype, "none", "2D")]
        assert (c.slope, c.fixed) == d1[:2], (op, width)
        assert (c.strided.per_repeat, c.strided.per_row, c.strided.fixed) == d2, (op, width)  # type: ignore[union-attr]
    cast = A5.vector_cost("cast", 4)
    assert (cast.slope, cast.fixed) == rows[("TCVT", "fp32", "fp16", "1D")][:2]


# ---- the cost forms -------------------------------------------------------------------------------------


def test_a5_vector_cost_reproduces_pto_isa_measurements():
    """PTO-ISA st_a5_fit measured cycles (tadd_fit, texp_fit); its fits are within a few percent."""
    cm = CostModel(A5)
    assert cm.vector(COST["add"], 1, 1280, 4, True) == pytest.approx(80, rel=0.02)     # TADD fp32 1x1280
    assert cm.vector(COST["add"], 20, 1280, 4, False) == pytest.approx(869, rel=0.03)  # 20x1312, valid 1280
    assert cm.vector(COST["exp"], 1, 1280, 2, True) == pytest.approx(103, rel=0.02)     # TEXP fp16 1x1280
    assert cm.vector(COST["exp"], 10, 1280, 2, False) == pytest.approx(463, rel=0.03)   # 10x1344, valid 1280
    # fp16 and fp32 exp differ per repeat on a5 (PTO-ISA fits them separately); a2a3 has one row
    assert cm.vector(COST["exp"], 1, 1280, 2, True) != cm.vector(COST["exp"], 1, 1280, 4, True)


def test_a5_fixed_cost_is_paid_by_every_instruction_a2a3_head_only_when_idle():
    head, body, tail = CostModel(A5).vector_parts(COST["add"], 64, 64, 4, True)
    assert head == tail == 0 and body == pytest.approx(55.073657 + 1.2469671 * 64)
    head, body, tail = CostModel(A2A3).vector_parts(COST["add"], 64, 64, 4, True)
    assert (head, body, tail) == (10, 128, 14)  # PTO-ISA a2a3 vadd: unchanged


def test_ops_without_an_a5_row_keep_a2a3s_cost_marked_assumed():
    for op in ("div", "maximum", "log", "row_reduce"):
        c, base = A5.vector_costs[op], A2A3.vector_costs[op]
        assert c.assumed and (c.head, c.slope, c.tail, c.fixed) == (base.head, base.slope, base.tail, base.fixed)
    assert not A5.vector_costs["add"].assumed and not A2A3.vector_costs["add"].assumed
