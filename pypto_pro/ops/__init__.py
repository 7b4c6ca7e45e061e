"""Operation declarations, one module per family (the real API reference's categories).

Importing this package registers every declaration in ``pypto_pro.ops.decl.APIS`` (the ``pl.*``
functions) and ``INSTRUCTIONS`` (the IR instructions they emit). See ``decl.py``.
"""
from pypto_pro.ops import (conversion, data_movement, element_access, elementwise, matrix, move,  # noqa: F401
                           reduction, resources)
from pypto_pro.ops import simt  # noqa: F401,E402  (pl.simt.launch)
from pypto_pro.ops import bitwise, comparison, fused, vector_mask  # noqa: F401
from pypto_pro.ops import getval, padding, quantization, scatter_gather, sorting, transpose  # noqa: F401
from pypto_pro.ops import debug, debug_dump  # noqa: F401,E402
from pypto_pro.ops import insert  # noqa: F401
from pypto_pro.ops import ssbuf, tile_element  # noqa: F401  (SSBUF; getval / setval on tiles)
from pypto_pro.ops import set_stride  # noqa: F401,E402  (pl.set_stride)
from pypto_pro.ops import matrix_mx, mx_cast, mx_load  # noqa: F401,E402  (pl.matmul_mx, pl.matmul_mx_acc, MX scale loads)
from pypto_pro.ops import vf  # noqa: F401,E402  (register-level VF ops: ops/vf/)
from pypto_pro.ops.decl import APIS, INSTRUCTIONS, Api, Instruction  # noqa: F401
