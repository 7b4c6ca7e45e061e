"""Compile errors located in helpers, modules and indented kernels; kernels the frontend must accept."""
from __future__ import annotations

import importlib.util
import sys
import uuid

import pytest
import torch
from compile_error_cases import T16, T32, V16, V32, Cases, expect_error
from located import check_location

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.ir.nodes import TileOp, walk_stmts

CASES = Cases(globals())
case, line_case = CASES.case, CASES.line_case


@pl.jit
def return_at_end_of_section(x: T32, z: T32):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        t = g.next()
        pl.load(t, x, [0, 0])
        pl.muls(t, t, 3.0)
        pl.store(z, t, [0, 0])
        return


def test_return_inside_section_keeps_the_section():
    ops = [s.op for s in walk_stmts(return_at_end_of_section.compile().kernel.body) if isinstance(s, TileOp)]
    assert ops == ["load", "muls", "store"]
    x = torch.rand(128, 128)
    z = torch.zeros(128, 128)
    return_at_end_of_section(x, z)
    torch.testing.assert_close(z, x * 3.0)


def test_kernel_defined_in_a_function_reports_real_columns():
    """An indented kernel (dedented before parsing) still gets columns of the real file."""
    @pl.jit
    def local_kernel(x: T16):
        a = pl.make_tile(V16, addr=0x0)
        with pl.section_vector():
            pl.muls(a, a, pl.DT_FP16)  # <- here

    expect_error(local_kernel, "'scalar' must be a scalar, got DataType", "pl.DT_FP16")


HELPER_MODULE = '''\
import pypto_pro.language as pl


@pl.inline
def load_scaled(tile, tensor, row, factor):
    pl.load(tile, tensor, [row, 0])
    pl.muls(tile, tile, 1.0 / factor)  # <- zero factor


@pl.inline
def add_into(dst, a, b):
    pl.add(dst, a, b)  # <- mismatch


@pl.inline
def outer(dst, a, b):
    add_into(dst, a, b)
'''


@pytest.fixture
def helper_module(tmp_path):
    path = tmp_path / f"kernel_helpers_{uuid.uuid4().hex}.py"
    path.write_text(HELPER_MODULE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[path.stem]


def _module_line(module, marker: str) -> tuple[str, int, str]:
    lines = HELPER_MODULE.splitlines(keepends=True)
    i = next(i for i, text in enumerate(lines) if marker in text)
    return module.__file__, i + 1, lines[i]


def test_error_in_helper_module_points_into_the_module(helper_module):
    helpers = helper_module

    @pl.jit
    def uses_helper(x: T32):
        a = pl.make_tile(V32, addr=0x0)
        with pl.section_vector():
            helpers.load_scaled(a, x, 0, 0)

    with pytest.raises(CompileError) as info:
        uses_helper.compile()
    assert "ZeroDivisionError while evaluating at compile time" in info.value.bare_message
    path, line, text = _module_line(helpers, "# <- zero factor")
    check_location(info.value, path, line, text, "1.0 / factor")


def test_type_error_in_nested_helper_points_into_the_module(helper_module):
    helpers = helper_module

    @pl.jit
    def uses_nested_helper(x: T32):
        a = pl.make_tile(V32, addr=0x0)
        b = pl.make_tile(V16, addr=0x10000)
        with pl.section_vector():
            helpers.outer(a, a, b)

    with pytest.raises(CompileError) as info:
        uses_nested_helper.compile()
    assert "'rhs' is DT_FP16 but 'out' is DT_FP32" in info.value.bare_message
    path, line, text = _module_line(helpers, "# <- mismatch")
    check_location(info.value, path, line, text, "b)")


@pl.inline
def add_optional(dst, src, bias=None):
    if bias is not None and bias.shape[0] > 0:  # short-circuit: bias.shape is not read when bias is None
        pl.add(dst, src, bias)
    else:
        pl.move(dst, src)


@pl.jit
def rebinding_outside_runtime_blocks(x: T32, z: T32, n: int, f: float):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=V32, addrs=0x20000, mutex_ids=[2])  # one slot: a5's UB is 248 KiB
    with pl.section_vector():
        t = g.next()
        for i in pl.range(0, x.shape[0] // 128, 1):
            t = g.next()
            pl.load(t, x, [i * 128, 0])
            add_optional(t, t)
            pl.store(z, t, [i * 128, 0])
        t = h.next()  # after the loop: a new binding, not a loop-carried one
        k = 1.0 if f > 0 else 0.5  # a float whichever branch is taken
        pl.expands(t, k)
        if n > 0:
            t = g.next()  # inside a run-time if: fine while t is not used after the if
            pl.muls(t, t, 2.0)
            pl.store(z, t, [0, 0])
        pl.store(z, h.current(), [128, 0])


def test_rebinding_outside_runtime_blocks_compiles_and_runs():
    x = torch.rand(256, 128)
    z = torch.zeros(256, 128)
    rebinding_outside_runtime_blocks(x, z, 0, -1.0)
    torch.testing.assert_close(z[:128], x[:128])
    assert torch.all(z[128:] == 0.5)


def test_indented_kernel_with_column_zero_string():
    """A multi-line string whose lines start at column 0 inside an indented kernel still parses."""
    @pl.jit
    def local_kernel(x: T16):
        note = """first line
second line at column 0"""
        a = pl.make_tile(V16, addr=0x0)
        with pl.section_vector():
            pl.muls(a, a, note)  # <- here

    expect_error(local_kernel, "'scalar' must be a scalar, got str", "note)")


lambda_kernel = pl.jit(lambda x: x + 1)


def test_lambda_is_a_plain_function_as_in_the_real_jit():
    # no parameter can be annotated pl.Tensor / pl.Ptr / DT_*: the real _is_tile_kernel leaves it Python
    from pypto_pro.runtime.kernel import JitKernel
    assert not isinstance(lambda_kernel, JitKernel)
    assert lambda_kernel(2) == 3
