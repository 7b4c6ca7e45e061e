"""C++ spellings of VF instructions: PTO-ISA's a5 vector micro-instructions (CCE intrinsics).

Each ``vf_instr(..., cpp=...)`` declaration names its spelling with one of the builders here, so
adding a spelling touches the op's one declaration. A spelling is ``spell(instr, e) -> [lines]``:
``e`` is the VF body emitter's operand writer (``backends/pto/vf.py``: ``e.dst(k)``, ``e.reg(arg[,
dtype])``, ``e.ptr(memref, dtype)``, ``e.scalar(expr, dtype)``, ``e.mode(instr)``); a case PTO-ISA has
no form for raises :class:`pypto_pro.ops.cpp.NoCpp` (a located CompileError naming the op).

Every identifier a spelling can write (intrinsics and enumerators) is registered in :data:`NAMES`;
``tests/backends/pto/test_vf_names.py`` checks each one against PTO-ISA's a5 headers
(``include/pto/npu/a5/*.hpp``) and vector ISA docs (``docs/isa/{vector,scalar}/**``), and
``tests/backends/pto/test_vf_emit.py`` cites, per name, one place PTO-ISA uses it.
"""
from __future__ import annotations

from typing import Callable, Iterable

from pypto_pro.ops.cpp import NoCpp

NAMES: set[str] = set()
# CCE intrinsics and enumerators the real PyPTO Pro backend emits (hicann/pypto
# framework/src/interface/pypto_pro/backend/backend_cce_vf_ops.cpp, the function named) that PTO-ISA's a5
# headers and ISA docs do not use: bisheng provides them (the chip runs what the real tool chain emits), so
# the spellings below write them as that backend does; ``tests/backends/pto/test_vf_names.py`` checks each
# against that file when ``PYPTO_ROOT`` is set.
REAL_NAMES: dict[str, str] = {
    "vabsdif": "EmitVFAbsSub", "pmov": "EmitVFMove", "vunpack": "EmitVFUnpack", "dhistv2": "EmitVFHistograms",
    "vmulscvt": "EmitVFMulsCast", "movp_b16": "EmitVFGetMaskSpr", "movp_b32": "EmitVFGetMaskSpr",
    "movvp": "EmitVFMaskGenWithRegTensor", "SqrtSpecificMode": "EmitVFSqrt", "MaskMergeMode": "EmitVFSqrt",
    "ZEROING": "EmitVFSqrt", "AscendC": "EmitVFSqrt", "PAT_VL64": "EmitVFCreateMask",
    "POS_HIGHEST": "EmitVFDuplicate",
    # MemBarMode values PTO-ISA never writes: EmitVFMemBar spells ir::MemBarMode by its value's name
    **{m: "EmitVFMemBar" for m in ("VST_LD", "VST_ST", "VLD_ST", "ST_VLD", "ST_VST", "LD_VST", "VS_ALL", "SV_ALL")}}

Spelling = Callable[..., list[str]]

# ---- enumerators ----------------------------------------------------------------------------------

MODE = {False: "MODE_ZEROING", True: "MODE_MERGING"}            # MergeMode of a lane-wise op
PATTERN = {"ALL": "PAT_ALL", "ALLF": "PAT_ALLF", "VL1": "PAT_VL1", "VL2": "PAT_VL2", "VL3": "PAT_VL3",
           "VL4": "PAT_VL4", "VL8": "PAT_VL8", "VL16": "PAT_VL16", "VL32": "PAT_VL32", "VL64": "PAT_VL64",
           "VL128": "PAT_VL128", "M3": "PAT_M3", "M4": "PAT_M4", "H": "PAT_H", "Q": "PAT_Q"}   # pset patterns
ROUND = {"rint": "ROUND_R", "round": "ROUND_A", "floor": "ROUND_F", "ceil": "ROUND_C", "trunc": "ROUND_Z",
         "odd": "ROUND_O"}
SAT = {False: "RS_DISABLE", True: "RS_ENABLE"}
PART = {0: "PART_EVEN", 1: "PART_ODD"}
HALF = {False: "LOWER", True: "HIGHER"}
MEMBAR = ("VST_VLD", "VLD_VST", "VST_VST", "VST_LD", "VST_ST", "VLD_ST", "ST_VLD", "ST_VST", "LD_VST", "VV_ALL",
          "VS_ALL", "SV_ALL")                                 # every ir::MemBarMode (EmitVFMemBar writes its name)
POS = {False: "POS_LOWEST", True: "POS_HIGHEST"}              # vdup from the lowest / highest register lane
ORDER = {False: "INC_ORDER", True: "DEC_ORDER"}
BITS = {1: "b8", 2: "b16", 4: "b32"}
# LoadDist -> vlds distribution ({w}: the register's element bits; None: no PTO-ISA spelling)
# (the generic BRC / US / DS / UNPK / E2B arrive here already explicit: ops/vf/memory.py's explicit_dist)
LOAD_DIST = {"NORM": "NORM", "BRC_B8": "BRC_B8", "BRC_B16": "BRC_B16", "BRC_B32": "BRC_B32",
             "US_B8": "US_B8", "US_B16": "US_B16", "DS_B8": "DS_B8",
             "DS_B16": "DS_B16", "UNPK_B8": "UNPK_B8", "UNPK_B16": "UNPK_B16", "UNPK_B32": "UNPK_B32",
             "UNPK4": "UNPK4_B8", "BLK": "BLK", "E2B_B16": "E2B_B16", "E2B_B32": "E2B_B32",
             "DINTLV_B8": "DINTLV_B8", "DINTLV_B16": "DINTLV_B16", "DINTLV_B32": "DINTLV_B32"}
# StoreDist -> vsts distribution ({w}: the source register's element bits)
STORE_DIST = {"NORM": "NORM_B{w}", "NORM_B16": "NORM_B16", "FIRST_ELEMENT": "ONEPT_B{w}", "PACK": "PK_B{w}",
              "PACK4": "PK4_B32", "INTLV": "INTLV_B{w}", "INTLV_B32": "INTLV_B32"}
MASK_DIST = {"NORM": "NORM", "US": "US", "DS": "DS", "PACK": "PK"}   # plds / psts

# dist spellings that expand to names PTO-ISA does not have (ONEPT_B8 / _B16, *_B64 ...) are refused
_KNOWN_DISTS = {"NORM", "BRC_B8", "BRC_B16", "BRC_B32", "US_B8", "US_B16", "DS_B8", "DS_B16", "UNPK_B8", "UNPK_B16",
                "UNPK_B32", "UNPK4_B8", "BLK", "E2B_B16", "E2B_B32", "DINTLV_B8", "DINTLV_B16", "DINTLV_B32",
                "NORM_B8", "NORM_B16", "NORM_B32", "ONEPT_B32", "PK_B16", "PK_B32", "PK_B64", "PK4_B32", "INTLV_B8",
                "INTLV_B16", "INTLV_B32", "US", "DS", "PK"}

for _table in (MODE, PATTERN, ROUND, SAT, PART, HALF, POS, ORDER, dict(enumerate(MEMBAR))):
    NAMES.update(n for n in _table.values() if n not in REAL_NAMES)
NAMES.update(_KNOWN_DISTS)
NAMES.update({"POST_UPDATE", "SPR_AR", "MODE_STORED", "Bin_N0", "Bin_N1", "RegTensor", "MaskReg", "UnalignReg",
              "__VEC_SCOPE__", "__ubuf__"})


def _names(*names: str) -> None:
    NAMES.update(n for n in names if n not in REAL_NAMES)


def _bits(dtype) -> int:
    return max(1, dtype.bits // 8)


def signed_lanes(dtype):
    """The signed type of the same width for UINT8 / UINT16 / UINT32 (else ``dtype``): a5's ``vci`` and
    unaligned stores have signed forms only, so the real backend passes unsigned registers through signed
    references (EmitVFArange, EmitVFStoreUnAlign); the bytes are the same."""
    from pypto_pro.language import dtypes as D
    return {D.DT_UINT8: D.DT_INT8, D.DT_UINT16: D.DT_INT16, D.DT_UINT32: D.DT_INT32}.get(dtype, dtype)


def dist_name(table: dict, dist: str, dtype) -> str:
    """The PTO-ISA distribution enumerator of ``dist`` for registers of ``dtype``."""
    spelled = table.get(dist)
    name = spelled.format(w=dtype.bits, h=dtype.bits // 2) if spelled else None
    if name not in _KNOWN_DISTS:
        raise NoCpp(f"distribution {dist} for {dtype.name} has no PTO-ISA spelling")
    return name


def pred_suffix(dtype) -> str:
    """``b8`` / ``b16`` / ``b32``: the predicate granularity of a mask made for ``dtype``."""
    w = _bits(dtype)
    if w not in BITS:
        raise NoCpp(f"PTO-ISA has no {dtype.bits}-bit predicate (pset_b8 / _b16 / _b32 only)")
    return BITS[w]


# ---- builders -------------------------------------------------------------------------------------


def binary(name: str, merging: bool = True) -> Spelling:
    """``name(dst, src0, src1, mask[, MODE])`` (vadd, vmul, vmax, vand ...; MODE_ZEROING / MODE_MERGING)."""
    _names(name)

    def spell(i, e):
        dt = i.attrs.get("dtype")
        a, b, m = i.args[:3]
        tail = f", {e.mode(i)}" if merging else ""
        return [f"{name}({e.dst(0)}, {e.reg(a, dt)}, {e.reg(b, dt)}, {e.reg(m)}{tail});"]
    return spell


def unary(name: str, merging: bool = True) -> Spelling:
    """``name(dst, src, mask[, MODE])`` (vexp, vabs, vsqrt, vrelu, vneg, vnot ...)."""
    _names(name)

    def spell(i, e):
        src, m = i.args[:2]
        tail = f", {e.mode(i)}" if merging else ""
        return [f"{name}({e.dst(0)}, {e.reg(src, i.attrs.get('dtype'))}, {e.reg(m)}{tail});"]
    return spell


def ln_times(literal: str) -> Spelling:
    """``vf.log2`` / ``vf.log10`` as the real backend composes them (EmitVFLog2 / EmitVFLog10): ``vln`` into
    the destination, then ``vmuls`` of it by the C float ``literal`` (1/ln 2, 1/ln 10), the same two
    roundings the simulator computes (``ops/vf/arith.py``)."""
    _names("vln", "vmuls")

    def spell(i, e):
        src, m = i.args[:2]
        d, mode = e.dst(0), e.mode(i)
        return [f"vln({d}, {e.reg(src, i.attrs.get('dtype'))}, {e.reg(m)}, {mode});",
                f"vmuls({d}, {d}, {literal}, {e.reg(m)}, {mode});"]
    return spell


def with_scalar(name: str, scalar_type: Callable | None = None, negate: bool = False) -> Spelling:
    """``name(dst, src, (T)scalar, mask, MODE)`` (vadds, vmuls, vmaxs, vmins, vlrelu; vshls / vshrs take
    an int16_t amount). ``negate``: ``vf.subs`` is ``vadds`` of ``-scalar``, as the real backend emits it."""
    _names(name)

    def spell(i, e):
        src, m, s = i.args[:3]
        dt = i.attrs.get("dtype")
        val = e.scalar(s, scalar_type(dt) if scalar_type else dt)
        val = f"-{val}" if negate else val
        return [f"{name}({e.dst(0)}, {e.reg(src, dt)}, {val}, {e.reg(m)}, {e.mode(i)});"]
    return spell


def accumulate(name: str, scalar: bool = False) -> Spelling:
    """``name(acc, src0, src1 | scalar, mask[, MODE])``: the destination is also an operand (vmula,
    vmadd, vaxpy); the destination register is the accumulator the frontend bound (``args[0]``)."""
    _names(name)

    def spell(i, e):
        acc, *rest = i.args
        dt = i.attrs.get("dtype")
        if e.reg(acc) != e.dst(0):
            raise NoCpp("the accumulator is not the destination register")
        if scalar:
            src, m, s = rest
            return [f"{name}({e.dst(0)}, {e.reg(src, dt)}, {e.scalar(s, dt)}, {e.reg(m)});"]
        a, b, m = rest
        return [f"{name}({e.dst(0)}, {e.reg(a, dt)}, {e.reg(b, dt)}, {e.reg(m)}, {e.mode(i)});"]
    return spell


def reduce(name: str, group: str) -> Spelling:
    """``name(dst, src, mask, MODE_ZEROING)``; ``datablock=True`` is the per-32-byte-block form ``group``
    (vcgadd / vcgmax / vcgmin)."""
    _names(name, group)

    def spell(i, e):
        src, m = i.args[:2]
        op = group if i.attrs.get("datablock") else name
        return [f"{op}({e.dst(0)}, {e.reg(src, i.attrs.get('dtype'))}, {e.reg(m)}, MODE_ZEROING);"]
    return spell


def compare(scalar: bool) -> Spelling:
    """``vcmp_<op>(dst_mask, src0, src1, mask)`` / ``vcmps_<op>(dst_mask, src, scalar, mask)``."""
    ops = ("eq", "ne", "lt", "le", "gt", "ge")
    _names(*(f"{'vcmps' if scalar else 'vcmp'}_{o}" for o in ops))

    def spell(i, e):
        dt = i.attrs.get("dtype")
        op = f"{'vcmps' if scalar else 'vcmp'}_{i.attrs['cmp']}"
        if scalar:
            src, m, s = i.args[:3]
            return [f"{op}({e.dst(0)}, {e.reg(src, dt)}, {e.scalar(s, dt)}, {e.reg(m)});"]
        a, b, m = i.args[:3]
        return [f"{op}({e.dst(0)}, {e.reg(a, dt)}, {e.reg(b, dt)}, {e.reg(m)});"]
    return spell


def regs_call(name: str, nargs_reg: int, tail: Iterable[str] = ()) -> Spelling:
    """``name(dsts..., first nargs_reg register operands..., tail...)`` with no mode (vsel, vintlv,
    pand, psel ...); register operands are read as the first destination's dtype."""
    _names(name, *tail)
    extra = list(tail)

    def spell(i, e):
        dt = i.dsts[0].dtype if i.dsts and i.dsts[0].kind == "vreg" else None
        regs = [e.reg(a, dt if getattr(a, "reg", None) is not None and a.reg.kind == "vreg" else None)
                for a in i.args[:nargs_reg]]
        return [f"{name}({', '.join([*(e.dst(k) for k in range(len(i.dsts))), *regs, *extra])});"]
    return spell


def named(name: str, build: Callable, names: Iterable[str] = ()) -> Spelling:
    """A spelling of its own: ``build(instr, e) -> [lines]`` writing ``name`` (and ``names``)."""
    _names(name, *names)
    return build


# ---- masks, moves, memory ------------------------------------------------------------------------


def _pset(i, e):
    pat = PATTERN.get(i.attrs["pattern"])  # PAT_VL64: EmitVFCreateMask's (PTO-ISA never writes it)
    if pat is None:
        raise NoCpp(f"MaskPattern.{i.attrs['pattern']} is not a pattern the real EmitVFCreateMask writes")
    return [f"{e.dst(0)} = pset_{pred_suffix(i.attrs['dtype'])}({pat});"]


def _plt(i, e):
    # plt_bN(uint32_t &n, POST_UPDATE) writes the count back: a copy keeps vf.update_mask's scalar unchanged
    n = e.temp("uint32_t", f"static_cast<uint32_t>({e.scalar(i.args[0], None)})")
    return [f"{e.dst(0)} = plt_{pred_suffix(i.attrs['dtype'])}({n}, POST_UPDATE);"]


def _vlds(i, e):
    dt = i.attrs["dtype"]
    ptr, off = e.ptr(i.args[0], dt)
    from pypto_pro.ops.vf.load_dists import explicit_dist
    dist = dist_name(LOAD_DIST, explicit_dist(i.attrs["dist"], dt.bits // 8), dt)
    dsts = ", ".join(e.dst(k) for k in range(len(i.dsts)))
    return [f"vlds({dsts}, {ptr}, {off}, {dist});"]


def _vsts(i, e):
    src, m, addr = i.args
    dt = i.attrs["dtype"]
    ptr, off = e.ptr(addr, dt)
    return [f"vsts({e.reg(src, dt)}, {ptr}, {off}, {dist_name(STORE_DIST, i.attrs['dist'], dt)}, {e.reg(m)});"]


def _vstsx2(i, e):
    even, odd, m, addr = i.args
    dt = i.attrs["dtype"]
    ptr, off = e.ptr(addr, dt)
    return [f"vsts({e.reg(even, dt)}, {e.reg(odd, dt)}, {ptr}, {off}, {dist_name(STORE_DIST, 'INTLV', dt)}, "
            f"{e.reg(m)});"]


def _mask_ptr(e, addr):
    from pypto_pro.language.dtypes import DT_UINT32
    return e.ptr(addr, DT_UINT32)


def _plds(i, e):
    ptr, off = _mask_ptr(e, i.args[0])
    return [f"plds({e.dst(0)}, {ptr}, {off}, {MASK_DIST[i.attrs['dist']]});"]


def _psts(i, e):
    src, addr = i.args
    ptr, off = _mask_ptr(e, addr)
    return [f"psts({e.reg(src)}, {ptr}, {off}, {MASK_DIST[i.attrs['dist']]});"]


def _vdup(i, e):
    value, m = i.args[:2]
    dt = i.attrs["dtype"]
    if m is None:  # every lane: the unpredicated broadcast
        return [f"vbr({e.dst(0)}, {e.scalar(value, dt)});"]
    return [f"vdup({e.dst(0)}, {e.scalar(value, dt)}, {e.reg(m)}, {e.mode(i)});"]


def _all_lanes(e, dtype) -> str:
    """A predicate of every lane at ``dtype``'s width, declared before the instruction."""
    return e.temp("MaskReg", f"pset_{pred_suffix(dtype)}(PAT_ALL)")


def _vdup_reg(i, e):
    src, m = i.args[:2]
    pos = POS[bool(i.attrs.get("highest"))]  # POS_HIGHEST: EmitVFDuplicate's (PTO-ISA never writes it)
    mask = e.reg(m) if m is not None else _all_lanes(e, i.attrs["dtype"])
    return [f"vdup({e.dst(0)}, {e.reg(src, i.attrs['dtype'])}, {mask}, {pos}, {e.mode(i)});"]


def _mem_bar(i, e):
    mode = i.attrs.get("mode") or "VST_VLD"
    if mode not in MEMBAR:
        raise NoCpp(f"MemBarMode.{mode} is not one of the real backend's ir::MemBarMode values")
    return [f"mem_bar({mode});"]


pset = named("pset_b32", _pset, ("pset_b8", "pset_b16"))
plt = named("plt_b32", _plt, ("plt_b8", "plt_b16"))
vlds = named("vlds", _vlds)
vsts = named("vsts", _vsts)
vstsx2 = named("vsts", _vstsx2)
plds = named("plds", _plds)
psts = named("psts", _psts)
vdup = named("vdup", _vdup, ("vbr",))
vdup_reg = named("vdup", _vdup_reg)
mem_bar = named("mem_bar", _mem_bar)


# ---- conversions, composites, indexing ---------------------------------------------------------------


def _vexpdif(i, e):
    src, mx, m = i.args[:3]
    dt = i.attrs["dtype"]
    part = PART[1 if i.attrs.get("odd") else 0]
    return [f"vexpdif({e.dst(0)}, {e.reg(src, dt)}, {e.reg(mx, dt)}, {e.reg(m)}, {part});"]


def _vci(i, e):
    """``vf.arange`` as the real backend's EmitVFArange writes it: ``vci(dst, start, INC_ORDER / DEC_ORDER)``,
    unsigned lanes through a signed reference (vci has no unsigned form); 64-bit lanes (no 8-byte vci) as
    its sequence: the int32 ramp 0, 1, 2, ... (negated when decreasing), zero high words, the two
    interleaved into the 64-bit lanes, then ``vadds`` of the start."""
    dt, d = i.attrs["dtype"], e.dst(0)
    if dt.bits == 64:
        lo, hi, dump = (e.temp("RegTensor<int32_t>", None) for _ in range(3))
        m, u = e.temp("MaskReg", "pset_b32(PAT_ALL)"), "(RegTensor<uint32_t>&)"
        lines = [f"vci({lo}, 0, INC_ORDER);"]
        if i.attrs.get("down"):
            lines.append(f"vneg({lo}, {lo}, {m}, MODE_ZEROING);")
        return lines + [f"vdup({hi}, 0, {m}, MODE_ZEROING);", f"vintlv({u}{d}, {u}{dump}, {u}{lo}, {u}{hi});",
                        f"vadds({d}, {d}, {e.scalar(i.args[0], dt)}, {m}, MODE_ZEROING);"]
    signed = signed_lanes(dt)
    if signed is not dt:
        d = e.reg(i.dsts[0], signed)
    return [f"vci({d}, {e.scalar(i.args[0], signed)}, {ORDER[bool(i.attrs.get('down'))]});"]


def _vtrc(i, e):
    src, m = i.args[:2]
    return [f"vtrc({e.dst(0)}, {e.reg(src, i.attrs['dtype'])}, ROUND_Z, {e.reg(m)}, {e.mode(i)});"]


def _vmull(i, e):
    a, b, m = i.args[:3]
    dt = i.attrs["dtype"]
    return [f"vmull({e.dst(0)}, {e.dst(1)}, {e.reg(a, dt)}, {e.reg(b, dt)}, {e.reg(m)});"]


def _vaddc(i, e):
    a, b, carry_in, m = i.args[:4]
    dt = i.attrs["dtype"]
    op = "vsubcs" if i.attrs.get("borrow") else "vaddcs"
    return [f"{op}({e.dst(0)}, {e.dst(1)}, {e.reg(a, dt)}, {e.reg(b, dt)}, {e.reg(carry_in)}, {e.reg(m)});"]


def _half(name: str):
    def spell(i, e):
        return [f"{name}({e.dst(0)}, {e.reg(i.args[0])}, {HALF[bool(i.attrs.get('upper'))]});"]
    return spell


def _pintlv(name: str):
    def spell(i, e):
        w = pred_suffix(i.attrs["dtype"])
        a, b = i.args[:2]
        return [f"{name}_{w}({e.dst(0)}, {e.dst(1)}, {e.reg(a)}, {e.reg(b)});"]
    return spell


def _vsqz(i, e):
    src, m = i.args[:2]
    mode = "MODE_STORED" if i.attrs.get("store_reg") else "MODE_ZEROING"
    return [f"vsqz({e.dst(0)}, {e.reg(src, i.attrs['dtype'])}, {e.reg(m)}, {mode});"]


def _vselr(i, e):
    from pypto_pro.language import dtypes as D
    src, idx = i.args[:2]
    dt = i.attrs["dtype"]
    uint = {1: D.DT_UINT8, 2: D.DT_UINT16, 4: D.DT_UINT32}[_bits(dt)]
    return [f"vselr({e.dst(0)}, {e.reg(src, dt)}, {e.reg(idx, uint)});"]


def _gather(i, e):
    """Element gather as the real EmitVFGather writes it: 8- and 16-bit data through ``int16_t`` register
    and ``int8_t`` / ``int16_t`` pointer references (an 8-bit tile's bytes zero-extended into 16-bit
    lanes, u16 indices); a 16-bit tile with u32 indices is ``vgather2_bc`` (each element in the low half
    of a 32-bit lane: PTO-ISA's TGather_b16_bc); 32-bit data with u32 indices as it is (TGather_b32)."""
    from pypto_pro.language import dtypes as D
    idx, m, addr = i.args[:3]
    dt, src, it = i.attrs["dtype"], i.attrs.get("src", i.attrs["dtype"]), i.attrs.get("index", idx.dtype)
    op, dst = "vgather2", e.dst(0)
    if src.bits <= 16:
        op = "vgather2_bc" if it.bits == 32 else "vgather2"
        dst = e.reg(i.dsts[0], D.DT_INT16)
        ptr, off = e.ptr(addr, D.DT_INT8 if src.bits == 8 else D.DT_INT16)
    else:
        ptr, off = e.ptr(addr, dt)
    return [f"{op}({dst}, {ptr} + {off}, {e.reg(idx, it)}, {e.reg(m)});"]


def _gatherb(i, e):
    """DATA_BLOCK gather: ``vgatherb(dst, base, (RegTensor<uint32_t>&)offsets, mask)``, the a5 form PTO-ISA's
    ``pto_vgatherb`` (common/arch_cce_intrinsic.hpp) forwards to from ``TGatherB.hpp``; the 8 block byte
    offsets are 32-bit lanes (the real backend also requires UINT32 indices)."""
    from pypto_pro.language.dtypes import DT_UINT32
    idx, m, addr = i.args[:3]
    if i.attrs["index"].bits != 32:
        raise NoCpp(f"vgatherb takes 32-bit block offsets, not {i.attrs['index'].name}")
    ptr, off = e.ptr(addr, i.attrs["dtype"])
    return [f"vgatherb({e.dst(0)}, {ptr} + {off}, {e.reg(idx, DT_UINT32)}, {e.reg(m)});"]


def _scatter(i, e):
    src, idx, m, addr = i.args[:4]
    dt = i.attrs["dtype"]
    ptr, off = e.ptr(addr, dt)
    return [f"vscatter({e.reg(src, dt)}, {ptr} + {off}, {e.reg(idx)}, {e.reg(m)});"]


def _hist(name: str) -> Spelling:
    """``chistv2`` (ACCUMULATE) / ``dhistv2`` (FREQUENCY) ``(dst, src, mask, Bin_N0 | Bin_N1)``, as the real
    backend's EmitVFHistograms writes both."""
    def spell(i, e):
        src, m = i.args[:2]
        bin_ = "Bin_N1" if i.attrs.get("high") else "Bin_N0"
        return [f"{name}({e.dst(0)}, {e.reg(src)}, {e.reg(m)}, {bin_});"]
    return spell


vexpdif = named("vexpdif", _vexpdif)
vci = named("vci", _vci)
vtrc = named("vtrc", _vtrc)
vmull = named("vmull", _vmull)
vaddc = named("vaddcs", _vaddc, ("vsubcs",))
ppack = named("ppack", _half("ppack"))
punpack = named("punpack", _half("punpack"))
pintlv = named("pintlv_b32", _pintlv("pintlv"), ("pintlv_b8", "pintlv_b16"))
pdintlv = named("pdintlv_b32", _pintlv("pdintlv"), ("pdintlv_b8", "pdintlv_b16"))
vsqz = named("vsqz", _vsqz)
vselr = named("vselr", _vselr)
vgather2 = named("vgather2", _gather, ("vgather2_bc",))
vgatherb = named("vgatherb", _gatherb)
vscatter = named("vscatter", _scatter)
chistv2 = named("chistv2", _hist("chistv2"))
dhistv2 = named("dhistv2", _hist("dhistv2"))
sprclr = named("sprclr", lambda i, e: ["sprclr(SPR_AR);"])
vusqz = named("vusqz", lambda i, e: [f"vusqz({e.dst(0)}, {e.reg(i.args[0])});"])


# ---- the lane-wise families (ops/vf/lanes.py declares them in loops: their spellings by op name) ------

_SHIFT = lambda dt: __import__("pypto_pro.language.dtypes", fromlist=["DT_INT16"]).DT_INT16  # noqa: E731

LANEWISE: dict[str, Spelling] = {
    **{op: binary(op) for op in ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vand", "vor", "vxor")},
    **{op: regs_call(op, 3) for op in ("pand", "por", "pxor")},
    "pnot": regs_call("pnot", 2),
    **{op: unary(op) for op in ("vabs", "vneg", "vrelu", "vexp", "vln", "vsqrt", "vnot")},
    "vlog": unary("vln"),
    "vlog2": ln_times("1.4426950408889634f"), "vlog10": ln_times("0.4342944819032518f"),
    "vtrc": vtrc,
    **{op: with_scalar(op) for op in ("vadds", "vmuls", "vmaxs", "vmins", "vlrelu")},
    "vsubs": with_scalar("vadds", negate=True),
    "vshift_left_s": with_scalar("vshls", _SHIFT), "vshift_right_s": with_scalar("vshrs", _SHIFT),
    "vshift_left_v": binary("vshl"), "vshift_right_v": binary("vshr"),
    "vabs_sub": binary("vabsdif"),   # EmitVFAbsSub (cpp.REAL_NAMES): vabsdif(dst, src0, src1, mask, MODE_ZEROING)
}
LANEWISE_MISSING: dict[str, str] = {}


def lanewise(op: str) -> dict:
    """``cpp=`` / ``cpp_missing=`` of a lane-wise op declared by ``ops/vf/lanes.py``'s builders."""
    if op in LANEWISE:
        return {"cpp": LANEWISE[op]}
    return {"cpp_missing": LANEWISE_MISSING.get(op, f"no PTO-ISA spelling is known for {op}")}


def _vmov(i, e):
    src, m = i.args[:2]
    if m is None:
        return [f"vmov({e.dst(0)}, {e.reg(src, i.attrs['dtype'])});"]
    return [f"vmov({e.dst(0)}, {e.reg(src, i.attrs['dtype'])}, {e.reg(m)}, {e.mode(i)});"]


vmov = named("vmov", _vmov)

def _vldus(i, e):
    """An unaligned load primes its own alignment register from the same address (``vldas`` then
    ``vldus``), as the real backend's unified ``vf.load`` does; ``vf.load_unalign_pre`` adds nothing."""
    u = e.temp("UnalignReg", None)
    at = e.own_ptr(i.args[0], i.attrs["dtype"])
    return [f"vldas({u}, {at});", f"vldus({e.dst(0)}, {u}, {at});"]


def _vstus(i, e):
    """``vf.store_unalign`` of ``count`` elements, flushed at once (``vstus`` then ``vstas``, both
    POST_UPDATE on a pointer of their own, as PTO-ISA's a5 headers pair them), so the sequence's
    ``store_unalign_post`` writes nothing more. The AR-stream form (after ``vf.squeeze``) is refused: the
    real backend threads one alignment register through the stream (``vstur`` per store, one ``vstar`` at
    the post), which this per-store form cannot express and which nothing here can run to check."""
    src, addr, count = i.args[:3]
    if i.attrs.get("from_ar"):
        raise NoCpp("the AR-stream form after vf.squeeze (vstur / vstar) is not spelled by this backend yet")
    dt = signed_lanes(i.attrs["dtype"])
    u = e.temp("UnalignReg", None)
    at = e.own_ptr(addr, dt)
    return [f"vstus({u}, {e.scalar(count, None)}, {e.reg(src, dt)}, {at}, POST_UPDATE);",
            f"vstas({u}, {at}, 0, POST_UPDATE);"]


vldus = named("vldus", _vldus, ("vldas",))
vstus = named("vstus", _vstus, ("vstas",))
vstas = named("vstas", lambda i, e: ["// vf.store_unalign_post: each vstus above flushed its own alignment register"])


def _block_word(i, e) -> tuple[str, str]:
    """A pointer of its own at a DataBlock transfer's address, and its stride word. PTO-ISA's a5 headers
    (``TMov.hpp``: ``cfgStride = (blockStride << 16) | repeatStride``) pack the block stride (in 32-byte
    blocks) into the high half; the repeat stride stays 0 because our post_update is a separate
    pointer advance. 64-bit elements have no vsldb / vsstb overload (b8 / b16 / b32 only)."""
    dt = i.attrs["dtype"]
    if dt.bits == 64:
        raise NoCpp(f"vsldb / vsstb take 8-, 16- or 32-bit elements, not {dt.name}")
    addr, bs = i.args[-2], i.args[-1]
    return e.own_ptr(addr, dt), f"(static_cast<uint32_t>({e.scalar(bs, None)}) << 16u)"


def _vsldb(i, e):
    """Block-strided load: the POST_UPDATE form on a pointer of its own (advanced by a repeat stride of
    0, so nothing moves), which is the overload whose stride word PTO-ISA's a5 headers document."""
    at, word = _block_word(i, e)
    return [f"vsldb({e.dst(0)}, {at}, {word}, {e.reg(i.args[0])}, POST_UPDATE);"]


def _vsstb(i, e):
    """Block-strided store, spelled like ``_vsldb`` (``vsstb(value, ptr, word, mask, POST_UPDATE)`` as
    PTO-ISA's a5 ``TMov.hpp`` / ``TExtract.hpp`` write it)."""
    at, word = _block_word(i, e)
    return [f"vsstb({e.reg(i.args[0], i.attrs['dtype'])}, {at}, {word}, {e.reg(i.args[1])}, POST_UPDATE);"]


vsldb = named("vsldb", _vsldb)
vsstb = named("vsstb", _vsstb)


def _pstu(i, e):
    """``vf.store_unalign`` of a mask register: ``pstu(u, mask, p); vstas(u, p, 0, POST_UPDATE);`` on a
    pointer of its own (pstu advances it in place), flushed at once as PTO-ISA's ``TQuant.hpp`` pairs
    them; the pointer is uint16_t / uint32_t as the mask's element width (b8 has no form)."""
    from pypto_pro.language.dtypes import DT_UINT16, DT_UINT32
    src, addr = i.args[:2]
    bits = i.attrs["dtype"].bits
    if bits not in (16, 32):
        raise NoCpp(f"pstu stores b16 / b32 masks, not a mask of {i.attrs['dtype'].name}")
    u = e.temp("UnalignReg", None)
    at = e.own_ptr(addr, DT_UINT16 if bits == 16 else DT_UINT32)
    return [f"pstu({u}, {e.reg(src)}, {at});", f"vstas({u}, {at}, 0, POST_UPDATE);"]


pstu = named("pstu", _pstu, ("vstas",))
