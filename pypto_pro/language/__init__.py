"""The pypto_pro DSL, imported as ``pl``: ``import pypto_pro.language as pl``.

Names, signatures and meanings follow the real PyPTO Pro (hicann/pypto). Every operation is declared
once in ``pypto_pro/ops/`` and exported here; dtypes and enums live in ``dtypes.py`` / ``enums.py``.
"""
from __future__ import annotations

from types import SimpleNamespace as _SimpleNamespace

from pypto_pro.language import dtypes as _dtypes
from pypto_pro.language import enums as _enums
from pypto_pro.language import pipeline, system
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import DN, ND, NN, NZ, ZN, ZZ
from pypto_pro.language.jit import inline, jit
from pypto_pro.language.ops import (OPERATIONS, get_block_idx, get_block_num, get_subblock_idx, get_subblock_num,
                                    max, min, range, section_cube, section_vector)
from pypto_pro.language.resources import addptr, make_ptr, make_tensor, make_tuple, setval, struct, struct_array
from pypto_pro.language.scalars import const, constexpr
from pypto_pro.language.simt import Simt as simt  # noqa: N813  (the real pl.simt namespace)
from pypto_pro.language.tile_type import TileType
from pypto_pro.language.vf import Vf, vector_function
from pypto_pro.language.types import DYNAMIC, STATIC, Constexpr, DTypeVar, MemRef, Ptr, Scalar, Tensor, Tile

globals().update({d.name: d for d in _dtypes.ALL_DTYPES})
globals().update({n: getattr(_enums, n) for n in _enums.PUBLIC_ENUMS})
globals().update(OPERATIONS)

# the real names that build the real IR objects: they raise IROnlyError (language/ir_only.py)
from pypto_pro.language import parser  # noqa: E402  (the real pl.parser package path)
from pypto_pro.language.ir_only import (KernelDef, function, kernel, loads, loads_program, parse,  # noqa: E402
                                        parse_program, program)

# pl.mutex: the real namespace holding the two buffer-id calls (pl.mutex.mutex_lock(pipe=...))
mutex = _SimpleNamespace(mutex_lock=system.mutex_lock, mutex_unlock=system.mutex_unlock)

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "OPERATIONS")]
