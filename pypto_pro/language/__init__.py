"""The pypto_pro DSL, imported as ``pl``: ``import pypto_pro.language as pl``."""
from __future__ import annotations

from pypto_pro.language import pipeline, system
from pypto_pro.language.dtypes import (DT_BF16, DT_BOOL, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                                       DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DataType)
from pypto_pro.language.enums import MemorySpace, PipeType
from pypto_pro.language.jit import inline, jit
from pypto_pro.language.ops import (abs, add, adds, cast, div, divs, exp, expand_add, expand_div, expand_max,
                                    expand_min, expand_mul, expand_sub, expands, get_block_idx, get_block_num,
                                    get_subblock_idx, get_subblock_num, load, load_tile, log, make_tile,
                                    make_tile_group, make_view, matmul, matmul_acc, max, maximum, maxs, min, minimum, mins, move, mul,
                                    muls, neg, range, recip, relu, rsqrt, section_cube, section_vector,
                                    set_validshape, sqrt, store, store_tile, sub, subs, sum)
from pypto_pro.language.ops import _tile_max, _tile_min  # TODO(lead): tile reduction (see ops.py)
from pypto_pro.language.scalars import const, constexpr
from pypto_pro.language.types import DYNAMIC, Constexpr, DTypeVar, Tensor, TileType

__all__ = [n for n in dir() if not n.startswith("_") and n != "annotations"]
