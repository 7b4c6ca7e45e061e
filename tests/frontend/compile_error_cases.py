"""The registry of compile-error cases shared by ``test_compile_errors*.py``: each case is a kernel
whose compile must fail with a message at the line marked ``# <- here`` (found through
``inspect.getsourcelines``, no hard-coded line numbers), the column taken from a token on that line."""
from __future__ import annotations

import re

import pytest
from located import check_location, marked_line, one_line_kernel

import pypto_pro.language as pl
from pypto_pro import CompileError

T16 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]
T32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
S16 = pl.Tensor[[256, 256], pl.DT_FP16]
I32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_INT32]
V16 = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)  # 32 KiB
V32 = pl.TileType(shape=[128, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)  # 64 KiB


def expect_error(kernel, match: str, token: str | None = None, where=None, **constexprs) -> CompileError:
    """Compile ``kernel``: it must raise a CompileError matching ``match``, located at the marked line."""
    with pytest.raises(CompileError) as info:
        kernel.compile(**constexprs)
    err = info.value
    assert re.search(match, err.bare_message), f"{match!r} not in: {err.bare_message}"
    path, line, text = marked_line(where or kernel.fn)
    check_location(err, path, line, text, token)
    return err


class Cases(list):
    """One test file's cases (``pytest.param``s); ``namespace`` resolves the names of one-line kernels."""

    def __init__(self, namespace: dict):
        super().__init__()
        self.namespace = namespace

    def case(self, match: str, token: str | None = None, where=None):
        """Register the decorated kernel: compiling it must fail with ``match`` at the marker."""
        def register(kernel):
            self.append(pytest.param(kernel, match, token, where, id=kernel.__name__))
            return kernel
        return register

    def line_case(self, name: str, line: str, match: str, token: str | None = None, *, tensor: str = "T16",
                  section: str = "section_vector", tile: str | None = None, **jit_options):
        """Register as case ``name`` the kernel ``def name(x: <tensor>)`` whose first statement is ``line``
        (the marked one), followed by an empty section; with ``tile``, the kernel whose one statement in
        the section is ``line``, on ``a = pl.make_tile(<tile>, addr=0x0)``. Compiling it must fail with
        ``match`` at ``line``."""
        fn = one_line_kernel(name, line, self.namespace, tensor, section, tile)
        return self.case(match, token)(pl.jit(**jit_options)(fn))
