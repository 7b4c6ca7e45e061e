"""Operation declarations, one module per family (the real API reference's categories).

Importing this package registers every declaration in ``pypto_pro.ops.decl.APIS`` (the ``pl.*``
functions) and ``INSTRUCTIONS`` (the IR instructions they emit). See ``decl.py``.
"""
from pypto_pro.ops import (conversion, data_movement, element_access, elementwise, matrix, move,  # noqa: F401
                           reduction, resources)
from pypto_pro.ops import insert  # noqa: F401
from pypto_pro.ops.decl import APIS, INSTRUCTIONS, Api, Instruction  # noqa: F401
