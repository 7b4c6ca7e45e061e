"""Every enumeration of the real PyPTO Pro language, under its real name, members and order.

Source: the real bindings (``python/src/bindings/ir/ir.cpp`` of hicann/pypto) and the API pages
under ``docs/zh/pypto_pro/api/**`` that document each member. Member values are the real C++ enums'
integers (``framework/include/ir/op_attr_types.h``, ``memory_space.h``, ``pipe.h``); ``int(member)``
gives it, as the real (pybind11) enums do. ``SectionKind`` is ours (which engine a section is for).
"""
from __future__ import annotations

import enum


class _Named(enum.Enum):
    """Members print as ``pl.<Enum>.<member>`` and hash by identity (C speed: the simulator's hot
    path looks these up per instruction)."""

    def __repr__(self) -> str:
        return f"pl.{type(self).__name__}.{self.name}"

    __hash__ = object.__hash__

    def __int__(self) -> int:
        return int(self.value)


class MemorySpace(_Named):
    """Where a tile lives (MemorySpace.md)."""

    DDR = 0          # off-chip global memory (tensors)
    Vec = 1          # UB: the Vector engine's unified buffer
    Mat = 2          # L1: Cube input staging
    Left = 3         # L0A: Cube left operand
    Right = 4        # L0B: Cube right operand
    Scaling = 5      # fixpipe quantisation parameters (FB)
    Acc = 6          # L0C: Cube accumulator
    Bias = 7         # bias table
    ScaleLeft = 8    # MX scales of the left operand (L0A scale domain)
    ScaleRight = 9   # MX scales of the right operand (L0B scale domain)


class PipeType(_Named):
    """The independent in-order pipes of a core (PipeType.md); ``ALL`` names every pipe (bar_all)."""

    MTE1 = 0  # L1 -> L0A / L0B / Bias / ScaleLeft / ScaleRight
    MTE2 = 1  # GM -> L1 / UB
    MTE3 = 2  # UB -> GM, UB -> L1
    M = 3     # Cube matmul
    V = 4     # vector compute
    S = 5     # scalar (getval / setval)
    FIX = 6   # L0C -> GM / UB / L1, quantisation
    ALL = 7


class SectionKind(enum.Enum):
    """Which engine's program a ``with pl.section_*()`` block belongs to (ours)."""

    VECTOR = "vector"
    CUBE = "cube"


class _Int(_Named):
    """Enums whose members are the real bindings' integers (in declaration order)."""


def _int_enum(name: str, members: str, doc: str) -> type[_Int]:
    cls = _Int(name, [(m, i) for i, m in enumerate(members.split())], module=__name__)  # type: ignore[call-overload]
    cls.__doc__ = doc
    return cls


TensorLayout = _int_enum("TensorLayout", "ND DN NZ ZN NN ZZ",
                         "Data layout of a GM tensor (ND, NZ; DN as a marker) or a tile (all six) (TensorLayout.md).")
ND, DN, NZ, ZN, NN, ZZ = (TensorLayout[m] for m in ("ND", "DN", "NZ", "ZN", "NN", "ZZ"))

TilePad = _int_enum("TilePad", "null zero max min", "Fill value of a tile's invalid region for pl.fillpad (TilePad.md).")
CompactMode = _int_enum("CompactMode", "null normal row_plus_one", "Compact layout of a tile buffer (CompactMode.md).")
TileLayout = _int_enum("TileLayout", "none_box row_major col_major", "Box layout of a tile (IR level).")
ReluPreMode = _int_enum("ReluPreMode", "NormalRelu", "ReLU fused into a fixpipe store / move.")
AtomicType = _int_enum("AtomicType", "AtomicNone AtomicAdd", "Atomic write mode of a store.")
STPhase = _int_enum("STPhase", "Unspecified Partial Final", "Fixpipe drain phase of a store (unit flag).")
AccPhase = _int_enum("AccPhase", "Unspecified Partial Final", "Fixpipe drain phase of matmul / matmul_acc (unit flag).")
AccToVecMode = _int_enum("AccToVecMode", "SingleModeVec0 SingleModeVec1 DualModeSplitM DualModeSplitN",
                         "How an Acc -> Vec move distributes the tile over the block's Vector cores.")
RoundMode = _int_enum("RoundMode", "CAST_NONE CAST_RINT CAST_ROUND CAST_FLOOR CAST_CEIL CAST_TRUNC CAST_ODD",
                      "Rounding of pl.cast and the *_cast fused ops (CAST_ROUND: ties away from zero).")
QuantMode = _int_enum("QuantMode", "SYM ASYM", "pl.quant: symmetric or asymmetric (with offset).")
CrossCoreSyncMode = _int_enum("CrossCoreSyncMode", "INTER_BLOCK INTER_SUBBLOCK INTRA_BLOCK UNICAST_BLOCK",
                              "Scope of a cross-core flag (modes 0-3 of the hardware).")
SyncCoreType = _int_enum("SyncCoreType", "AIV_ONLY AIC_ONLY MIX", "Cores taking part in pl.system.sync_all.")
SyncAllMode = _int_enum("SyncAllMode", "HARD SOFT", "pl.system.sync_all: FFTS hardware signal or GM workspace polling.")
CacheLine = _int_enum("CacheLine", "SINGLE_CACHE_LINE ENTIRE_DATA_CACHE", "Scope of pl.system.dcci.")
DcciDst = _int_enum("DcciDst", "AUTO CACHELINE_OUT CACHELINE_UB CACHELINE_ALL CACHELINE_ATOMIC", "Target of pl.system.dcci.")
CoreType = _Int("CoreType", [("VECTOR", 1), ("CUBE", 0)], module=__name__)  # type: ignore[call-overload]
CoreType.__doc__ = "Engine of a core (the real ir/pipe.h: CUBE = 0, VECTOR = 1; bound VECTOR first)."
CmpMode = _int_enum("CmpMode", "EQ NE LT LE GT GE", "Comparison of the tile compare ops (TCMP / TCMPS).")


class FillPadMode(_Named):
    """pl.fillpad: write the padding into a copy, expand it, or fill the tile in place."""

    NORMAL = 0
    EXPAND = 1
    INPLACE = 2


# ---- VF (vector function) enumerations ----------------------------------------------------------

MaskPattern = _int_enum("MaskPattern", "ALL ALLF VL1 VL2 VL3 VL4 VL8 VL16 VL32 VL64 VL128 M3 M4 H Q",
                        "Predicate pattern of vf.create_mask.")
MergeMode = _int_enum("MergeMode", "ZEROING MERGING", "What a masked-off lane of a VF result holds.")
ReduceMode = _int_enum("ReduceMode", "SUM MAX MIN", "VF reduction kind.")
CompareMode = _int_enum("CompareMode", "EQ NE LT LE GT GE", "VF comparison kind.")
DuplicatePos = _int_enum("DuplicatePos", "LOWEST HIGHEST", "Which lane vf.full duplicates.")
CastLayout = _int_enum("CastLayout", "ZERO ONE TWO THREE", "Lane placement of a widening / narrowing VF conversion.")
VFRoundMode = _int_enum("VFRoundMode", "CAST_ROUND CAST_RINT CAST_FLOOR CAST_CEIL CAST_TRUNC CAST_ODD CAST_HYBRID",
                        "Rounding of VF type conversions.")
SaturateMode = _int_enum("SaturateMode", "OFF ON", "Saturation of narrowing VF conversions.")
BinType = _int_enum("BinType", "BIN0 BIN1", "Histogram bin half of vf.histograms.")
HistType = _int_enum("HistType", "ACCUMULATE FREQUENCY", "Histogram kind of vf.histograms.")
SqueezeMode = _int_enum("SqueezeMode", "STORE_REG NO_STORE_REG", "Whether vf.squeeze writes the AR register.")
PackPart = _int_enum("PackPart", "LOWER UPPER", "Half written by vf.pack / read by vf.unpack.")
MaskWidth = _int_enum("MaskWidth", "B32 B16", "Element width of a mask read back by vf.get_mask_spr.")
LoadDist = _int_enum("LoadDist", "NORM BRC BRC_B8 BRC_B16 BRC_B32 US US_B8 US_B16 DS DS_B8 DS_B16 UNPK UNPK_B8 "
                                 "UNPK_B16 UNPK_B32 UNPK4 BLK E2B E2B_B16 E2B_B32 DINTLV_B8 DINTLV_B16 DINTLV_B32",
                     "Distribution mode of vf.load_align.")
StoreDist = _int_enum("StoreDist", "NORM NORM_B16 FIRST_ELEMENT PACK PACK4 INTLV INTLV_B32",
                      "Distribution mode of vf.store_align.")
DataCopyMode = _int_enum("DataCopyMode", "NORM DATA_BLOCK_LOAD DATA_BLOCK_COPY", "Block addressing of VF loads/stores.")
IndexOrder = _int_enum("IndexOrder", "INCREASE_ORDER DECREASE_ORDER", "Direction of vf.arange.")
MemBarMode = _int_enum("MemBarMode", "VST_VLD VLD_VST VST_VST VST_LD VST_ST VLD_ST ST_VLD ST_VST LD_VST VV_ALL "
                                     "VS_ALL SV_ALL", "Ordering enforced by vf.mem_bar.")
FunctionType = _int_enum("FunctionType", "Opaque Orchestration InCore Helper SimtVF SimtCallee",
                         "Kind of an IR function (pl.function / pl.kernel).")

# the enums the language exports (pl.<name>)
PUBLIC_ENUMS = ("MemorySpace", "PipeType", "TensorLayout", "TilePad", "CompactMode", "ReluPreMode", "AtomicType",
                "STPhase", "AccPhase", "AccToVecMode", "RoundMode", "QuantMode", "CrossCoreSyncMode", "SyncCoreType",
                "SyncAllMode", "CacheLine", "DcciDst", "FillPadMode", "MaskPattern", "MergeMode", "ReduceMode",
                "CompareMode", "DuplicatePos", "CastLayout", "VFRoundMode", "SaturateMode", "BinType", "HistType",
                "SqueezeMode", "PackPart", "MaskWidth", "LoadDist", "StoreDist", "DataCopyMode", "IndexOrder",
                "MemBarMode", "FunctionType")
