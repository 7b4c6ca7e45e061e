"""Every real public ``pl`` call signature (``real_signatures.py``, data read from the real pages) against
ours via ``inspect.signature``: same names, order, kinds and defaults, or a documented superset that
still binds every real call the same way; and every real kernel-code keyword (the real builders'
operand names) binds the parameter at its position."""
from __future__ import annotations

import ast
import inspect

import pytest

import pypto_pro.language as pl
from pypto_pro.language import dtypes, enums
from pypto_pro.ops.decl import APIS

from real_signatures import KERNEL, PAGE

# ours accepts more than the real one here, and every real call binds the same (checked below); why:
OURS_EXTRA = {
    "move": ("transpose", "ours: a transposing Mat -> Left / Right window or Vec -> Vec copy (docs/language.md)"),
    "transpose": ("axis1 axis2", "the real builder's axis1 / axis2 (block_ops.py _ir_transpose)"),
    "add_relu_cast": ("target_type", "the real builder takes target_type positionally too (KERNEL)"),
    "sub_relu_cast": ("target_type", "the real builder takes target_type positionally too (KERNEL)"),
    "mul_cast": ("target_type", "the real builder takes target_type positionally too (KERNEL)"),
    "dump_data": ("workspace loc", "the real builder takes workspace / loc positionally too (KERNEL)"),
    "gather": ("args", "the 5-tile compare form gather(out, src, k_value, cdst, tmp, cmp_mode=...) of the real IR op"),
    "Vf.exp_sub": ("dtype", "ours: the result dtype of a widening exp_sub (docs/vf.md)"),
    "Vf.load_unalign": ("post_update", "the API page's post_update (load_unalign.md)"),
    "jit": ("device check build_dir timing trace", "ours: the simulator's options (docs/simulator.md)"),
    "make_tuple": ("args", "ours: a positional argument is a located error, not a TypeError"),
    "pipeline.stage": ("fn produces consumes", "ours: @pl.pipeline.stage(produces=[...], consumes=[...]) names a "
                       "stage's roles (docs/language.md); fn is then optional"),
}
# the real one takes these positional-or-keyword; ours positional only, as the real parser
# (_parse_range_call rejects keywords with a ParserSyntaxError)
POSITIONAL_ONLY_IN_KERNELS = {"range"}

P, K, PO, V, VK = "P", "K", "PO", "V", "VK"
_KIND = {inspect.Parameter.POSITIONAL_ONLY: PO, inspect.Parameter.POSITIONAL_OR_KEYWORD: P,
         inspect.Parameter.VAR_POSITIONAL: V, inspect.Parameter.KEYWORD_ONLY: K, inspect.Parameter.VAR_KEYWORD: VK}
_EMPTY = object()
_SCOPE = {**{n: getattr(enums, n) for n in enums.PUBLIC_ENUMS}, **{d.name: d for d in dtypes.ALL_DTYPES}, "pl": pl}


def _real(params: str) -> list[tuple[str, str, object]]:
    args = ast.parse(f"def f({params}): pass").body[0].args  # our own data string, not real code
    pos = args.posonlyargs + args.args
    defaults = [_EMPTY] * (len(pos) - len(args.defaults)) + [eval(ast.unparse(d), _SCOPE) for d in args.defaults]
    out = [(a.arg, PO if i < len(args.posonlyargs) else P, d) for i, (a, d) in enumerate(zip(pos, defaults))]
    if args.vararg:
        out.append(("*", V, _EMPTY))
    out += [(a.arg, K, _EMPTY if d is None else eval(ast.unparse(d), _SCOPE))
            for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append(("**", VK, _EMPTY))
    return out


def _ours(obj) -> list[tuple[str, str, object]]:
    out = []
    for q in inspect.signature(obj).parameters.values():
        kind = _KIND[q.kind]
        name = "*" if kind == V else "**" if kind == VK else q.name
        out.append((name, kind, _EMPTY if q.default is inspect.Parameter.empty else q.default))
    return out


def _resolve(name: str):
    obj = pl
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _same_default(a, b) -> bool:
    return a is b or (a is not _EMPTY and b is not _EMPTY and type(a) is type(b) and a == b)


def _binds_every_real_call(real, ours) -> list[str]:
    """Why a call valid on the real signature would bind differently (or not at all) on ours."""
    problems = []
    by_name = {n: (i, k, d) for i, (n, k, d) in enumerate(ours)}
    real_pos = [n for n, k, _ in real if k in (P, PO)]
    ours_pos = [n for n, k, _ in ours if k in (P, PO)]
    if ours_pos[:len(real_pos)] != real_pos:
        problems.append(f"positional order {ours_pos} does not start with the real {real_pos}")
    for n, k, d in real:
        if n not in by_name:
            problems.append(f"no parameter {n!r}")
            continue
        _, ok, od = by_name[n]
        allowed = {P: {P}, PO: {PO, P}, K: {K, P}, V: {V}, VK: {VK}}[k]
        if ok not in allowed:
            problems.append(f"{n!r} is {ok}, the real one {k}")
        if d is _EMPTY and od is not _EMPTY:
            problems.append(f"{n!r} has a default {od!r}; the real one requires it")
        if d is not _EMPTY and not _same_default(d, od):
            problems.append(f"{n!r} defaults to {od!r}, the real one to {d!r}")
    real_names = {n for n, _, _ in real}
    for n, k, d in ours:
        if n not in real_names and k in (P, PO, K) and d is _EMPTY:
            problems.append(f"extra required parameter {n!r}")
    return problems


@pytest.mark.parametrize("name", sorted(PAGE))
def test_signature_is_the_real_one(name):
    real, ours = _real(PAGE[name]), _ours(_resolve(name))
    if name in POSITIONAL_ONLY_IN_KERNELS:
        ours = [(n, P if k == PO else k, d) for n, k, d in ours]
    if name in OURS_EXTRA:
        extra = set(OURS_EXTRA[name][0].split())
        problems = [m for m in _binds_every_real_call(real, ours) if m.split("'")[1] not in extra]
        assert problems == []
        differing = {n for n, k, d in ours if (n, k, d) not in real}
        differing = {"args" if n == "*" else n for n in differing}
        assert differing <= extra, f"undocumented differences {differing - extra}"
        return
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in real], f"ours {ours}\nreal {real}"
    for (n, _, od), (_, _, rd) in zip(ours, real):
        assert _same_default(od, rd), f"{n}: ours defaults to {od!r}, the real one to {rd!r}"


def test_every_declared_pl_operation_has_a_real_signature_or_is_ours():
    """Nothing slips past the table: each ``pl.*`` op we declare is a real one, or listed as ours."""
    # ours: the real IR ops behind a dim= / scalar dispatch, callable by name (docs/language.md), expand_add,
    # and make_view (a declared alias of a tile's bytes)
    ours_only = {f"{side}_{op}" for side in ("row", "col") for op in ("sum", "max", "min", "argmax", "argmin",
                                                                        "expand_add", "expand_sub", "expand_mul",
                                                                        "expand_div", "expand_max", "expand_min")}
    ours_only |= {"expand_add", "make_view", "adds", "subs", "muls", "divs", "maxs", "mins"}  # the scalar IR ops
    declared = {a.name for a in APIS.values() if a.namespace == "pl"}
    unknown = sorted(n for n in declared if n not in PAGE and n not in ours_only)
    assert unknown == [], f"declared ops with no real signature in real_signatures.py: {unknown}"


@pytest.mark.parametrize("name", sorted(KERNEL))
def test_real_builder_keywords_bind_the_same_parameter(name):
    """The i-th positional operand of the real builder names our i-th parameter (directly or via an alias)."""
    entry = APIS[name]
    ours = [n for n, k, _ in _ours(entry.stub) if k in (P, PO)]
    builder = _real(KERNEL[name])
    for i, (n, k, _) in enumerate(builder):
        if k not in (P, PO):
            assert n in inspect.signature(entry.stub).parameters, f"{name}: keyword {n}= is not ours"
            continue
        bound = n if n in ours else entry.aliases.get(n)
        assert bound == ours[i], f"{name}({n}=...) binds {bound!r}, the real builder's position {i} is {ours[i]!r}"
