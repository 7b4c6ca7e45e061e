"""Our errors are catchable as the real PyPTO Pro's classes, at their real import paths."""
import pickle

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, LaunchError
from pypto_pro.errors import ErrorCode
from pypto_pro.language.parser.diagnostics import get_error_code
from pypto_pro.language.parser.diagnostics._exceptions import (InvalidOperationError, ParserError, ParserSyntaxError,
                                                               ParserTypeError, UndefinedVariableError,
                                                               UnsupportedFeatureError)


def _compile_error(fn) -> CompileError:
    with pytest.raises(CompileError) as info:
        pl.jit(fn)(np.zeros(8, np.int32))
    return info.value


def undefined(out: pl.Tensor[[8], pl.DT_INT32]):
    with pl.section_vector():
        pl.setval(out, 0, nowhere)  # noqa: F821


def unsupported(out: pl.Tensor[[8], pl.DT_INT32]):
    with pl.section_vector():
        try:
            pass
        finally:
            pass


def op_rule(out: pl.Tensor[[8], pl.DT_INT32]):
    with pl.section_vector():
        pl.setval(out, 0, 1.5)  # a float into an int32 tensor


def bad_annotation(out: pl.Tensor[[8], pl.DT_INT32], n: str):
    with pl.section_vector():
        pl.setval(out, 0, 1)


@pytest.mark.parametrize("fn,cls", [(undefined, UndefinedVariableError), (unsupported, UnsupportedFeatureError),
                                    (op_rule, ParserSyntaxError), (bad_annotation, ParserTypeError)])
def test_compile_errors_carry_the_real_class(fn, cls):
    err = _compile_error(fn)
    assert isinstance(err, cls) and isinstance(err, ParserError) and isinstance(err, CompileError)
    assert err.loc is not None and err.span["line"] == err.line and err.message == err.bare_message
    assert get_error_code(type(err)) == cls.error_code


def test_default_kind_and_codes():
    assert type(CompileError("x")) is ParserSyntaxError
    assert isinstance(CompileError("x", kind="operation"), InvalidOperationError)
    assert isinstance(CompileError("x", kind="value"), ValueError)
    assert isinstance(CompileError("x", kind="typeerror"), TypeError)
    assert ParserSyntaxError.error_code == ErrorCode.INVALID_VAL == 0xF00002
    err = CompileError("boom", kind="type")
    assert type(pickle.loads(pickle.dumps(err))) is ParserTypeError


def test_launch_errors_are_builtin_type_and_value_errors():
    assert isinstance(LaunchError("x", kind="type"), TypeError)
    assert isinstance(LaunchError("x", kind="value"), ValueError)
    assert isinstance(LaunchError("x", kind="runtime"), RuntimeError)
    plain = LaunchError("x")
    assert not isinstance(plain, (TypeError, ValueError)) and str(plain) == "x"
