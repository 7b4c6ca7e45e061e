"""VF (vector function) operation declarations: the ``vf.*`` API of ``@pl.vector_function`` bodies
and the VF instructions it emits (``decl.py`` says how one is declared), plus the ``vf_call``
tile-level instruction a call of a vector function is (``call.py``).

Importing this package registers every declaration.
"""
from pypto_pro.ops.vf import advanced, arith, blocks, call, convert, histogram, indexing, memory, reduce, special, spr, unaligned  # noqa: F401
from pypto_pro.ops.vf.decl import VF_INSTRS, VF_STUBS  # noqa: F401
from pypto_pro.language.vf import Vf  # noqa: E402

for _name, _stub in VF_STUBS.items():  # the static methods of pl.Vf are the declared stubs
    setattr(Vf, _name, staticmethod(_stub))
