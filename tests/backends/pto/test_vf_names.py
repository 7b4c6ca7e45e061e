"""Every name the VF C++ emitter can write (``ops/vf/cpp.NAMES``: intrinsics and enumerators) is one
PTO-ISA uses: checked against its a5 headers (``include/pto/npu/a5/*.hpp``) and its vector / scalar ISA
docs (``docs/isa/{vector,scalar}/**``) when ``PTO_ISA_ROOT`` is set. ``CITES`` gives, per name, one
file of PTO-ISA (3186c381) that uses it; every identifier in the emitted golden blocks is in ``NAMES``."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import pypto_pro.language  # noqa: F401  (registers the ops)
from pypto_pro.ops.vf.cpp import NAMES

ROOT = os.environ.get("PTO_ISA_ROOT")
needs_pto_isa = pytest.mark.skipif(not ROOT, reason="PTO_ISA_ROOT is not set (a PTO-ISA checkout)")

CITES = {
    "vbr": "include/pto/npu/a5/Int64Binary.hpp",
    "vldas": "include/pto/npu/a5/TExtract.hpp",
    "vldus": "include/pto/npu/a5/TExtract.hpp",
    "vstas": "include/pto/npu/a5/TDeInterleave.hpp",
    "vstus": "include/pto/npu/a5/TDeInterleave.hpp",
    "vgatherb": "include/pto/common/arch_cce_intrinsic.hpp",
    "pstu": "include/pto/npu/a6/TQuant.hpp",
    "vsldb": "docs/isa/vector/ops/vector-load-store/vsldb.md",
    "vsstb": "include/pto/npu/a5/TMov.hpp",
    "BLK": "include/pto/npu/a5/TMov.hpp",
    "BRC_B16": "include/pto/npu/a5/TCmps.hpp",
    "BRC_B32": "include/pto/npu/a5/TCmps.hpp",
    "BRC_B8": "include/pto/npu/a5/TCmps.hpp",
    "Bin_N0": "include/pto/npu/a5/THistogram.hpp",
    "Bin_N1": "include/pto/npu/a5/THistogram.hpp",
    "DEC_ORDER": "include/pto/npu/a5/Tci.hpp",
    "DINTLV_B16": "include/pto/npu/a5/TCvt.hpp",
    "DINTLV_B32": "include/pto/npu/a5/Int64Binary.hpp",
    "DINTLV_B8": "include/pto/npu/a5/THistogram.hpp",
    "DS": "include/pto/npu/a5/TAddDeqRelu.hpp",
    "DS_B16": "docs/isa/vector/ops/vector-load-store/vlds.md",
    "DS_B8": "docs/isa/vector/ops/vector-load-store/vlds.md",
    "E2B_B16": "include/pto/npu/a5/TMov.hpp",
    "E2B_B32": "include/pto/npu/a5/TQuant.hpp",
    "HIGHER": "include/pto/npu/a5/TPartArgBinOps.hpp",
    "INC_ORDER": "include/pto/npu/a5/Int64Rearrange.hpp",
    "INTLV_B16": "docs/isa/vector/ops/vector-load-store/vstsx2.md",
    "INTLV_B32": "include/pto/npu/a5/Int64Binary.hpp",
    "INTLV_B8": "docs/isa/vector/ops/vector-load-store/vstsx2.md",
    "LOWER": "include/pto/npu/a5/Int64Binary.hpp",
    "MODE_MERGING": "include/pto/npu/a5/TPartArgBinOps.hpp",
    "MODE_STORED": "include/pto/npu/a5/TGather.hpp",
    "MODE_ZEROING": "include/pto/npu/a5/Int64Binary.hpp",
    "MaskReg": "include/pto/npu/a5/Int64Binary.hpp",
    "NORM": "include/pto/npu/a5/Int64Binary.hpp",
    "NORM_B16": "include/pto/npu/a5/TCvt.hpp",
    "NORM_B32": "include/pto/npu/a5/Int64Rearrange.hpp",
    "NORM_B8": "include/pto/npu/a5/TCvt.hpp",
    "ONEPT_B32": "include/pto/npu/a5/TQuant.hpp",
    "PART_EVEN": "include/pto/npu/a5/Int64Common.hpp",
    "PART_P0": "include/pto/npu/a5/TCvt.hpp",
    "PART_P1": "include/pto/npu/a5/TQuant.hpp",
    "PART_P2": "include/pto/npu/a5/TQuant.hpp",
    "PART_P3": "include/pto/npu/a5/TQuant.hpp",
    "PART_ODD": "include/pto/npu/a5/TColArgMax.hpp",
    "PAT_ALL": "include/pto/npu/a5/Int64Common.hpp",
    "PAT_ALLF": "include/pto/npu/a5/TGather.hpp",
    "PAT_H": "include/pto/npu/a5/TGather.hpp",
    "PAT_M3": "docs/isa/scalar/ops/predicate-generation-and-algebra/pge-b16.md",
    "PAT_M4": "docs/isa/scalar/ops/predicate-generation-and-algebra/pge-b16.md",
    "PAT_Q": "docs/isa/scalar/ops/predicate-generation-and-algebra/pge-b16.md",
    "PAT_VL1": "include/pto/npu/a5/Int64Reduce.hpp",
    "PAT_VL128": "docs/isa/scalar/predicate-generation-and-algebra.md",
    "PAT_VL16": "include/pto/npu/a5/TMov.hpp",
    "PAT_VL2": "docs/isa/scalar/ops/predicate-generation-and-algebra/pset-b8.md",
    "PAT_VL3": "docs/isa/scalar/ops/predicate-generation-and-algebra/pset-b8.md",
    "PAT_VL32": "include/pto/npu/a5/TQuant.hpp",
    "PAT_VL4": "docs/isa/scalar/ops/predicate-generation-and-algebra/pge-b8.md",
    "PAT_VL8": "include/pto/npu/a5/TQuant.hpp",
    "PK": "include/pto/npu/a5/TCmp.hpp",
    "PK4_B32": "include/pto/npu/a5/TQuant.hpp",
    "PK_B16": "include/pto/npu/a5/TAddReluConv.hpp",
    "PK_B32": "include/pto/npu/a5/TAddDeqRelu.hpp",
    "PK_B64": "include/pto/npu/a5/TCvt.hpp",
    "POST_UPDATE": "include/pto/npu/a5/Int64Binary.hpp",
    "POS_LOWEST": "include/pto/npu/a5/Int64Rearrange.hpp",
    "ROUND_A": "include/pto/npu/a5/TCvt.hpp",
    "ROUND_C": "docs/isa/vector/conversion-ops.md",
    "ROUND_F": "include/pto/npu/a5/TPow.hpp",
    "ROUND_O": "docs/isa/vector/conversion-ops.md",
    "ROUND_R": "include/pto/npu/a5/Int64Common.hpp",
    "ROUND_Z": "include/pto/npu/a5/Int64Common.hpp",
    "RS_DISABLE": "include/pto/npu/a5/Int64Common.hpp",
    "RS_ENABLE": "include/pto/npu/a5/TFMod.hpp",
    "RegTensor": "include/pto/npu/a5/TAdd.hpp",
    "SPR_AR": "include/pto/npu/a5/TGather.hpp",
    "UNPK4_B8": "include/pto/npu/a5/TDeQuant.hpp",
    "UNPK_B16": "include/pto/npu/a5/TAxpy.hpp",
    "UNPK_B32": "include/pto/npu/a5/TCvt.hpp",
    "UNPK_B8": "include/pto/npu/a5/TCvt.hpp",
    "US": "include/pto/npu/a5/Int64Binary.hpp",
    "US_B16": "docs/isa/vector/ops/vector-load-store/vlds.md",
    "US_B8": "docs/isa/vector/ops/vector-load-store/vlds.md",
    "UnalignReg": "include/pto/npu/a5/TDeInterleave.hpp",
    "VLD_VST": "include/pto/npu/a5/TQuant.hpp",
    "VST_VLD": "include/pto/npu/a5/TColSum.hpp",
    "VST_VST": "include/pto/npu/a5/TCvt.hpp",
    "VV_ALL": "include/pto/npu/a5/TQuant.hpp",
    "__VEC_SCOPE__": "include/pto/npu/a5/Int64Binary.hpp",
    "__ubuf__": "include/pto/npu/a5/Int64Binary.hpp",
    "chistv2": "include/pto/npu/a5/THistogram.hpp",
    "mem_bar": "include/pto/npu/a5/TColSum.hpp",
    "pand": "include/pto/npu/a5/Int64Binary.hpp",
    "pdintlv_b16": "docs/isa/scalar/ops/predicate-generation-and-algebra/pdintlv-b16.md",
    "pdintlv_b32": "docs/isa/scalar/ops/predicate-generation-and-algebra/pdintlv-b16.md",
    "pdintlv_b8": "include/pto/npu/a5/TCmp.hpp",
    "pintlv_b16": "include/pto/npu/a5/TGather.hpp",
    "pintlv_b32": "include/pto/npu/a5/TGather.hpp",
    "pintlv_b8": "include/pto/npu/a5/TGather.hpp",
    "plds": "include/pto/npu/a5/Int64Binary.hpp",
    "plt_b16": "include/pto/npu/a5/TColReduceIdx.hpp",
    "plt_b32": "include/pto/npu/a5/Int64Binary.hpp",
    "plt_b8": "include/pto/npu/a5/Int64Binary.hpp",
    "pnot": "include/pto/npu/a5/Int64Common.hpp",
    "por": "include/pto/npu/a5/Int64Binary.hpp",
    "ppack": "include/pto/npu/a5/Int64Binary.hpp",
    "psel": "include/pto/npu/a5/Int64Binary.hpp",
    "pset_b16": "include/pto/npu/a5/TCvt.hpp",
    "pset_b32": "include/pto/npu/a5/Int64Common.hpp",
    "pset_b8": "include/pto/npu/a5/TColReduceIdx.hpp",
    "psts": "include/pto/npu/a5/Int64Binary.hpp",
    "punpack": "include/pto/npu/a5/Int64Binary.hpp",
    "pxor": "include/pto/npu/a5/Int64Common.hpp",
    "sprclr": "include/pto/npu/a5/TGather.hpp",
    "vabs": "include/pto/npu/a5/TPow.hpp",
    "vadd": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vaddcs": "include/pto/npu/a5/Int64Binary.hpp",
    "vadds": "include/pto/npu/a5/Int64Binary.hpp",
    "vand": "include/pto/npu/a5/Int64Binary.hpp",
    "vaxpy": "include/pto/npu/a5/TAxpy.hpp",
    "vcadd": "include/pto/npu/a5/Int64Reduce.hpp",
    "vcgadd": "docs/isa/vector/ops/reduction-ops/vcadd.md",
    "vcgmax": "include/pto/npu/a5/TQuant.hpp",
    "vcgmin": "docs/isa/vector/ops/reduction-ops/vcgmax.md",
    "vci": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vcmax": "include/pto/npu/a5/Int64Reduce.hpp",
    "vcmin": "include/pto/npu/a5/Int64Reduce.hpp",
    "vcmp_eq": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmp_ge": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmp_gt": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmp_le": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmp_lt": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmp_ne": "include/pto/npu/a5/Int64Binary.hpp",
    "vcmps_eq": "include/pto/npu/a5/TCmps.hpp",
    "vcmps_ge": "include/pto/npu/a5/TCmps.hpp",
    "vcmps_gt": "include/pto/npu/a5/TCmps.hpp",
    "vcmps_le": "include/pto/npu/a5/TCmps.hpp",
    "vcmps_lt": "include/pto/npu/a5/TCmps.hpp",
    "vcmps_ne": "include/pto/npu/a5/TCmps.hpp",
    "vcpadd": "include/pto/npu/a5/TPairReduceSum.hpp",
    "vcvt": "include/pto/npu/a5/Int64Common.hpp",
    "vdintlv": "include/pto/npu/a5/Int64Common.hpp",
    "vdiv": "include/pto/npu/a5/Int64Common.hpp",
    "vdup": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vexp": "include/pto/npu/a5/TColExpandExpdif.hpp",
    "vexpdif": "docs/isa/vector/ops/reduction-ops/vcgadd.md",
    "vgather2": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vgather2_bc": "include/pto/npu/a5/TGather.hpp",
    "vintlv": "include/pto/npu/a5/Int64Common.hpp",
    "vlds": "include/pto/npu/a5/Int64Binary.hpp",
    "vln": "include/pto/npu/a5/TPow.hpp",
    "vlrelu": "include/pto/npu/a5/TLRelu.hpp",
    "vmadd": "include/pto/npu/a5/TFusedMulAdd.hpp",
    "vmax": "include/pto/npu/a5/TColArgMax.hpp",
    "vmaxs": "include/pto/npu/a5/TAddDeqRelu.hpp",
    "vmin": "include/pto/npu/a5/TColArgMin.hpp",
    "vmins": "include/pto/npu/a5/TAddReluConv.hpp",
    "vmov": "include/pto/npu/a5/TPartArgBinOps.hpp",
    "vmul": "include/pto/npu/a5/TColExpandMul.hpp",
    "vmula": "include/pto/npu/a5/Int64Binary.hpp",
    "vmull": "include/pto/npu/a5/Int64Binary.hpp",
    "vmuls": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vneg": "include/pto/npu/a5/TPow.hpp",
    "vnot": "include/pto/npu/a5/Int64Common.hpp",
    "vor": "include/pto/npu/a5/Int64Binary.hpp",
    "vpack": "include/pto/npu/a5/TPow.hpp",
    "vprelu": "include/pto/npu/a5/TPrelu.hpp",
    "vrelu": "include/pto/npu/a5/TFusedMulAddRelu.hpp",
    "vscatter": "include/pto/npu/a5/Int64Rearrange.hpp",
    "vsel": "include/pto/npu/a5/Int64Binary.hpp",
    "vselr": "include/pto/npu/a5/TCvt.hpp",
    "vshl": "include/pto/npu/a5/Int64Binary.hpp",
    "vshls": "include/pto/npu/a5/Int64Reduce.hpp",
    "vshr": "include/pto/npu/a5/Int64Binary.hpp",
    "vshrs": "include/pto/npu/a5/Int64Binary.hpp",
    "vsqrt": "include/pto/npu/a5/TRsqrt.hpp",
    "vsqz": "include/pto/npu/a5/TGather.hpp",
    "vsts": "include/pto/npu/a5/Int64Binary.hpp",
    "vsub": "include/pto/npu/a5/Int64Binary.hpp",
    "vsubcs": "include/pto/npu/a5/Int64Binary.hpp",
    "vtrc": "include/pto/npu/a5/TCvt.hpp",
    "vusqz": "docs/isa/vector/data-rearrangement.md",
    "vxor": "include/pto/npu/a5/TPow.hpp",
}


def _word(name: str) -> re.Pattern:
    return re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])")


def test_every_name_has_a_citation():
    assert sorted(NAMES - set(CITES)) == []


@needs_pto_isa
def test_each_citation_uses_the_name():
    root = Path(ROOT)
    wrong = [n for n, f in CITES.items() if not _word(n).search((root / f).read_text(errors="ignore"))]
    assert wrong == []


@needs_pto_isa
def test_every_emitter_name_is_in_pto_isa_a5_headers_or_vector_isa_docs():
    root = Path(ROOT)
    files = sorted((root / "include/pto/npu/a5").glob("*.hpp"))
    files += sorted(p for p in (root / "docs/isa").rglob("*.md") if {"vector", "scalar"} & set(p.parts))
    text = "\n".join(p.read_text(errors="ignore") for p in files)
    assert [n for n in sorted(NAMES) if not _word(n).search(text)] == []


def test_the_emitted_blocks_use_registered_names_only():
    from test_vf_emit import GOLDEN
    used: set[str] = set()
    for text in GOLDEN.values():
        code = re.sub(r"//.*", "", text)
        used |= set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code)) - {"static_cast", "for", "if", "while"}
        used |= set(re.findall(r"\b([A-Z][A-Z0-9_]{2,})\b", code))
        used |= {"RegTensor"} if "RegTensor<" in code else set()
    assert sorted(used - NAMES) == []


PYPTO_ROOT = os.environ.get("PYPTO_ROOT")
REAL_BACKEND = "framework/src/interface/pypto_pro/backend/backend_cce_vf_ops.cpp"
REAL_ENUMS = "framework/include/ir/op_attr_types.h"


def _enum_values(root: Path, body: str) -> set[str]:
    """The values of every ``ir::`` enum the function body spells by name (``VFEnumValueName(ir::EnumToString(
    static_cast<ir::E>(...)))``), as ``PYPTO_DECLARE_ENUM(E, ...)`` declares them."""
    decls = (root / REAL_ENUMS).read_text(errors="ignore")
    out: set[str] = set()
    for enum in re.findall(r"VFEnumValueName\(\s*ir::EnumToString\(\s*static_cast<ir::(\w+)>", body):
        m = re.search(r"PYPTO_DECLARE_ENUM\(\s*" + enum + r"\s*,([^)]*)\)", decls)
        out |= {v.strip() for v in m.group(1).split(",")} if m else set()
    return out


def test_real_backend_names_are_not_claimed_for_pto_isa():
    from pypto_pro.ops.vf.cpp import REAL_NAMES
    assert sorted(NAMES & set(REAL_NAMES)) == []


@pytest.mark.skipif(not PYPTO_ROOT, reason="PYPTO_ROOT is not set (a hicann/pypto checkout)")
def test_each_real_backend_name_is_written_by_the_function_it_cites():
    """``REAL_NAMES``: each name occurs in the body of the named ``EmitVF*`` function of the real backend, or
    is a value of an ``ir::`` enum that function writes by its value's name (EmitVFMemBar's MemBarMode)."""
    from pypto_pro.ops.vf.cpp import REAL_NAMES
    text = (Path(PYPTO_ROOT) / REAL_BACKEND).read_text(errors="ignore")
    wrong = []
    for name, fn in REAL_NAMES.items():
        at = text.find(f"static std::string {fn}(")
        end = text.find("\nstatic std::string ", at + 1)
        body = text[at:end if end > 0 else None]
        if at < 0 or not (_word(name).search(body) or name in _enum_values(Path(PYPTO_ROOT), body)):
            wrong.append((name, fn))
    assert wrong == []
