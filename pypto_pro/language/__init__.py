"""The pypto_pro DSL, imported as ``pl``: ``import pypto_pro.language as pl``."""
from __future__ import annotations

from pypto_pro.language import pipeline, system
from pypto_pro.language.dtypes import (DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_UINT8,
                                       DataType)
from pypto_pro.language.enums import MemorySpace, PipeType
from pypto_pro.language.jit import inline, jit
from pypto_pro.language.ops import (abs, add, adds, cast, div, divs, exp, expand_add, expand_div, expand_max,
                                    expand_min, expand_mul, expand_sub, expands, get_block_idx, get_block_num,
                                    get_subblock_idx, get_subblock_num, load, load_tile, log, make_tile,
                                    make_tile_group, make_view, matmul, matmul_acc, max, maximum, maxs, min, minimum, mins, move, mul,
                                    muls, neg, range, recip, relu, rsqrt, section_cube, section_vector,
                                    set_validshape, sqrt, store, store_tile, sub, subs, sum)
from pypto_pro.language.types import (DYNAMIC, STATIC, Constexpr, DTypeVar, MemRef, Ptr, Scalar, Tensor, Tile,
                                      TileType)
from pypto_pro.language.resources import addptr, make_ptr, make_tensor, make_tuple, setval, struct, struct_array
from pypto_pro.language import dtypes as _dtypes, enums as _enums
from pypto_pro.language.enums import DN, ND, NN, NZ, ZN, ZZ

globals().update({d.name: d for d in _dtypes.ALL_DTYPES})  # every pl.DT_* of the real language
globals().update({n: getattr(_enums, n) for n in _enums.PUBLIC_ENUMS})

__all__ = [n for n in dir() if not n.startswith("_") and n != "annotations"]
