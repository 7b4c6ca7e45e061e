"""What the C++ backend cannot spell is a located CompileError (an UnsupportedFeatureError) naming the
construct and why, raised by kernel.emit() / emit_kernel before anything is written, never an
#error line in kernel.cpp."""
from __future__ import annotations

import pytest

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.errors import CompileError
from pypto_pro.language.parser.diagnostics import UnsupportedFeatureError

VEC = pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec)


def _printf_ptr(x: pl.Ptr[pl.DT_FP32]):
    with pl.section_vector():
        pl.printf("at %p\n", x)  # <- here


def _int4_tensor(x: pl.Tensor[[16, 64], pl.DT_INT4], y: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(t, y, [0, 0])
        pl.store(y, t, [0, 0])


def _line_of(fn) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <- here" in line)


@pytest.mark.parametrize("fn,match", [
    (_printf_ptr, r"cannot emit pl\.printf: a %p"),
])
def test_unsupported_constructs_are_located_compile_errors(fn, match):
    k = pl.jit(fn, arch="a5")
    with pytest.raises(UnsupportedFeatureError, match=match) as exc:
        emit_kernel(k.compile().programs, k.name, k.arch)
    assert isinstance(exc.value, CompileError)
    assert exc.value.loc is not None and exc.value.loc.line == _line_of(fn)


def test_a_type_without_a_pto_isa_element_type_names_the_parameter():
    k = pl.jit(_int4_tensor, arch="a5")
    with pytest.raises(UnsupportedFeatureError, match=r"tensor parameter 'x': DT_INT4 has no PTO-ISA element type"):
        emit_kernel(k.compile().programs, k.name, k.arch)
