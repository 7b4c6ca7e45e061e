"""Tiling dataclasses as the kernel's last parameter: fields read at run time (arrays with run-time
indices), the packed C layout, and the real validation errors."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, LaunchError
from pypto_pro.language import tiling as tl


@dataclass
class Layout:
    pad: int[5]
    n: int
    scale: float
    flags: bool[3]
    on: bool
    tail: int[2] = field(default_factory=lambda: [7, 8])


@pl.jit
def read_fields(out: pl.Tensor[[16], pl.DT_FP32], tiling: Layout):
    with pl.section_vector():
        total = 0
        for i in pl.range(0, tiling.n):  # a run-time loop bound
            total = total + tiling.pad[i]  # a run-time index
        pl.setval(out, 0, total * 1.0)
        pl.setval(out, 1, tiling.scale)
        for i in pl.range(0, 3):
            if tiling.flags[i]:
                pl.setval(out, 2 + i, 1.0)
        if tiling.on:
            pl.setval(out, 5, tiling.tail[1] * 1.0)


def test_fields_drive_run_time_code():
    out = np.zeros(16, np.float32)
    read_fields(out, Layout(pad=[1, 2, 3, 4, 5], n=4, scale=0.1, flags=[True, False, True], on=True))
    assert out[:6].tolist() == [10.0, float(np.float32(0.1)), 1.0, 0.0, 1.0, 8.0]
    out[:] = 0
    read_fields(out, Layout(pad=[1, 2, 3, 4, 5], n=2, scale=2.0, flags=[False] * 3, on=False))
    assert out[:6].tolist() == [3.0, 2.0, 0.0, 0.0, 0.0, 0.0]
    assert len(read_fields._compiled_by_signature) == 1  # values are run-time: one compile


def test_packed_layout_matches_ctypes():
    raw, values = tl.pack(Layout(pad=[1, 2, 3, 4, 2**64 + 5], n=-1, scale=0.1, flags=[1, 0, 1], on=False))
    class C(ctypes.Structure):
        _fields_ = [("pad", ctypes.c_int64 * 5), ("n", ctypes.c_int64), ("scale", ctypes.c_float),
                    ("flags", ctypes.c_bool * 3), ("on", ctypes.c_bool), ("tail", ctypes.c_int64 * 2)]
    assert len(raw) == ctypes.sizeof(C)
    c = C.from_buffer_copy(raw)
    assert list(c.pad) == values["pad"] == [1, 2, 3, 4, 5]  # wrapped to 64 bits, as the device reads it
    assert values["scale"] == float(np.float32(0.1)) and values["flags"] == [True, False, True]
    assert "int64_t pad[5];" in tl.c_struct_decl(Layout) and "bool flags[3];" in tl.c_struct_decl(Layout)


def test_cpp_gets_the_tiling_struct():
    cpp = (read_fields.emit() / "kernel.cpp").read_text()
    assert "struct Layout {\n    int64_t pad[5];\n    int64_t n;\n    float scale;" in cpp
    assert "*reinterpret_cast<__gm__ const Layout*>(tiling)" in cpp and "__gm__ uint8_t* tiling" in cpp


# ---- launch errors ---------------------------------------------------------------------------------


def test_array_of_the_wrong_length_is_a_value_error():
    out = np.zeros(16, np.float32)
    with pytest.raises(LaunchError, match="Tiling field 'pad' expected 5 elements, got 4") as err:
        read_fields(out, Layout(pad=[1, 2, 3, 4], n=1, scale=1.0, flags=[True] * 3, on=True))
    assert isinstance(err.value, ValueError) and not out.any()


def test_wrong_tiling_object_is_a_type_error():
    with pytest.raises(LaunchError, match="expected a Layout instance") as err:
        read_fields(np.zeros(16, np.float32), {"n": 1})
    assert isinstance(err.value, TypeError)
    with pytest.raises(LaunchError, match="'pad' is int\\[5\\]: expected an indexable sequence") as err:
        read_fields(np.zeros(16, np.float32), Layout(pad=3, n=1, scale=1.0, flags=[True] * 3, on=True))
    assert isinstance(err.value, TypeError)


# ---- declaration errors ----------------------------------------------------------------------------


@dataclass
class Dup:
    a: int
    a: float  # noqa: F811  (a duplicate: Python keeps only this one)


@dataclass
class TooBig:
    arr: int[2049]


@dataclass
class BadElement:
    arr: str[4]


@dataclass
class ZeroSize:
    arr: int[0]


@dataclass
class NotLiteral:
    arr: int[2 * 2]


@dataclass
class Fine:
    n: int


@pytest.mark.parametrize("cls,needle", [
    (Dup, "Tiling class 'Dup' has duplicate field 'a'. All field names must be unique."),
    (TooBig, "Array size must not exceed 2048, got 2049"),
    (BadElement, "array element type must be int, float, or bool, got 'str'"),
    (ZeroSize, "array size must be a positive integer literal"),
    (NotLiteral, "array size must be a positive integer literal"),
])
def test_bad_tiling_classes_are_located_value_errors(cls, needle):
    def kernel(out: pl.Tensor[[16], pl.DT_FP32], tiling: cls):
        with pl.section_vector():
            pl.setval(out, 0, 1.0)
    with pytest.raises(CompileError, match=needle.replace(".", r"\.").replace("[", r"\[")) as err:
        pl.jit(kernel)(np.zeros(16, np.float32), None)
    assert isinstance(err.value, ValueError) and err.value.loc is not None
    assert not tl.is_tiling_class(cls)


def test_tiling_must_be_the_last_parameter():
    def kernel(tiling: Fine, out: pl.Tensor[[16], pl.DT_FP32]):
        with pl.section_vector():
            pl.setval(out, 0, 1.0)
    with pytest.raises(CompileError, match="must be the kernel's last parameter"):
        pl.jit(kernel)(Fine(1), np.zeros(16, np.float32))


def test_tiling_fields_are_read_only():
    def kernel(out: pl.Tensor[[16], pl.DT_FP32], tiling: Fine):
        with pl.section_vector():
            tiling.n = 3
    with pytest.raises(CompileError, match="read-only in the kernel"):
        pl.jit(kernel)(np.zeros(16, np.float32), Fine(1))


def test_max_size_array_and_is_tiling_class():
    @dataclass
    class Max:
        arr: int[2048]

    assert tl.is_tiling_class(Max) and tl.tiling_fields(Max)[0].size == 2048
    assert not tl.is_tiling_class(int) and not tl.is_tiling_class(Dup)


def test_struct_name_of_the_tiling_class_is_taken():
    def kernel(out: pl.Tensor[[16], pl.DT_FP32], tiling: Fine):
        s = pl.struct("Fine", v=0)
        with pl.section_vector():
            pl.setval(out, 0, s.v * 1.0)
    with pytest.raises(CompileError, match="'Fine' is the kernel's tiling class"):
        pl.jit(kernel)(np.zeros(16, np.float32), Fine(1))


def test_gm_layouts_other_than_nd_are_refused_not_misread():
    def kernel(out: pl.Tensor[[16, 16], pl.DT_FP32, pl.NZ]):
        with pl.section_vector():
            pl.setval(out, 0, 1.0)
    with pytest.raises(CompileError, match="layout NZ are not supported yet") as err:
        pl.jit(kernel)(np.zeros((16, 16), np.float32))
    from pypto_pro.language.parser.diagnostics import UnsupportedFeatureError
    assert isinstance(err.value, UnsupportedFeatureError)
    nd = pl.Tensor[[16, 16], pl.DT_FP32, pl.ND]
    assert nd.layout is pl.ND and pl.Tensor[[4], pl.DT_FP32, pl.MemRef(pl.MemorySpace.DDR, 0, 64)].memref.size == 64
