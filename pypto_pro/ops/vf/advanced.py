"""VF register permutations (``vf_computation/advanced_computation``): ``vf.interleave`` and
``vf.de_interleave``, two registers in, two out.

With ``src = src0 ++ src1`` (2 x lanes elements): ``de_interleave`` gives ``dst0[i] = src[2i]``,
``dst1[i] = src[2i + 1]``; ``interleave`` gives ``dst0[2i] = src0[i]``, ``dst0[2i+1] = src1[i]`` over
the first half of the lanes and ``dst1`` likewise over the second half (``vintlv`` / ``vdintlv``).
On mask registers the same permutation applies to the element predicates (``pintlv`` / ``pdintlv``) at
the granularity ``dtype=`` names (default FP32: b32), whatever the masks were created as.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec
from pypto_pro.backends.sim.vf.regfile import PerRegFile, active, lanes, np_of, set_active, view
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.language.dtypes import DT_FP32
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.decl import vf_api, vf_instr

FAMILY = "vf_advanced"


def _declare(name: str, op: str) -> None:
    def check(p, node, a):
        if isinstance(a["src0"], RegValue) and a["src0"].is_mask:
            ms = [c.mask(p, a, n) for n in ("src0", "src1")]
            # the predicate granularity is dtype= (default FP32: p{op}_b32), not the masks' own dtype, as the
            # real backend emits p*intlv_b8 / _b16 / _b32 (backend_cce_vf_ops.cpp)
            gran = c.dtype_arg(p, a, "dtype", DT_FP32)
            if gran.bits not in (8, 16, 32):
                p.fail(a.node("dtype"), f"vf.{name}() of mask registers works at b8 / b16 / b32, got {gran.name}")
            d0, d1 = c.dst(p, c.MASK, ms[0].dtype, 0), c.dst(p, c.MASK, ms[0].dtype, 1)
            c.emit(p, node, f"p{op[1:]}", (d0, d1), tuple(map(c.read, ms)), dtype=gran, api=name)
            return d0, d1
        regs = [c.reg(p, a, n) for n in ("src0", "src1")]
        dt = c.same_dtype(p, a, ("src0", "src1"), regs)
        want = c.dtype_arg(p, a, "dtype", dt)
        if c.width(want) != c.width(dt):
            p.fail(a.node("dtype"), f"vf.{name}(): dtype {want.name} must have the registers' width")
        d0, d1 = c.dst(p, c.VREG, want, 0), c.dst(p, c.VREG, want, 1)
        c.emit(p, node, op, (d0, d1), tuple(map(c.read, regs)), dtype=want, lanes=2 * lanes(want), api=name)
        return d0, d1

    def build(instr):
        s0, s1 = instr.args
        dt = instr.attrs["dtype"]
        u0, u1 = (d.uid for d in instr.dsts)
        t = np_of(dt)
        n = lanes(dt)

        views = PerRegFile(lambda rf: (view(rf.v[s0.reg.uid], s0.dtype).view(t), view(rf.v[s1.reg.uid], s1.dtype).view(t),
                                       view(rf.v[u0], dt), view(rf.v[u1], dt)))  # the sources', the results'

        def run(rf, mem, bases):
            a, b, o0, o1 = views(rf)
            if op == "vdintlv":
                both = np.concatenate([a, b])  # a fresh array: the results may overwrite a source
                o0[:] = both[0::2]
                o1[:] = both[1::2]
            else:
                mixed = np.empty(2 * n, t)
                mixed[0::2], mixed[1::2] = a, b
                o0[:] = mixed[:n]
                o1[:] = mixed[n:]

        def make(bases, scs, size):  # batched (backends/sim/vf/batch.py): the same permutation of [N, lanes] stacks
            def kernel(ins, outs, mem):
                a, b = ins[0].view(t), ins[1].view(t)
                if a.shape != b.shape:
                    a, b = np.broadcast_arrays(a, b)
                r0, r1 = outs[0].view(t), outs[1].view(t)
                if op == "vdintlv":
                    both = np.concatenate([a, b], axis=1)
                    r0[...] = both[:, 0::2]
                    r1[...] = both[:, 1::2]
                else:
                    mixed = np.empty((a.shape[0], 2 * n), t)
                    mixed[:, 0::2], mixed[:, 1::2] = a, b
                    r0[...] = mixed[:, :n]
                    r1[...] = mixed[:, n:]
            return kernel
        run.batched = Spec((op, t), make)  # type: ignore[attr-defined]
        return run

    def build_mask(instr):
        s0, s1 = instr.args
        dt = instr.attrs["dtype"]
        u0, u1 = (d.uid for d in instr.dsts)

        def run(rf, mem, bases):  # the same permutation of the element predicates
            a, b = active(rf.m[s0.reg.uid], dt).copy(), active(rf.m[s1.reg.uid], dt).copy()
            n = a.size
            if op == "vdintlv":
                both = np.concatenate([a, b])
                r0, r1 = both[0::2], both[1::2]
            else:
                mixed = np.empty(2 * n, np.bool_)
                mixed[0::2], mixed[1::2] = a, b
                r0, r1 = mixed[:n], mixed[n:]
            set_active(rf.m[u0], r0, dt)
            set_active(rf.m[u1], r1, dt)
        return run

    vf_instr(f"p{op[1:]}", FAMILY, build_mask, "VMASK", cpp=getattr(vcpp, f"p{op[1:]}"))
    vf_api(FAMILY, name, "src0, src1, dtype=None",
           f"{name}: two registers in, two out (see the module docstring).", check)
    vf_instr(op, FAMILY, build, "VADD", cpp=vcpp.regs_call(op, 2))


_declare("de_interleave", "vdintlv")
_declare("interleave", "vintlv")
