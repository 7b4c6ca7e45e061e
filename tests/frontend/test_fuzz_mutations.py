"""Mutation fuzzing of the frontend: every way a kernel can be broken must end in a located CompileError.

Valid kernels (kept here as source text: the seed add, an edge-tile add, a kernel with an inline
helper and if/elif/else, a row reduction) are mutated at the AST level (swap two names, drop an
argument, change a number, insert an unsupported statement, rename a ``pl`` attribute, delete,
duplicate, swap or wrap statements) and optionally at the text level (delete a character, insert a
line) inside function bodies. Each mutant is written to a temporary ``.py`` file, imported under a
fresh module name and compiled for a5 and a2a3 (never launched). A mutant that still compiles is
fine; one that is not Python at all is skipped; any other failure must be a ``pypto_pro.CompileError``
located inside the mutant file. Any other exception escaping the compiler is a frontend bug.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import importlib.util
import itertools
import os
import resource
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import pypto_pro
import pypto_pro.language as pl
from pypto_pro.runtime.kernel import JitKernel

HEADER = "import pypto_pro.language as pl\n\n\n"

SEED_ADD = HEADER + textwrap.dedent('''\
    @pl.jit
    def add_kernel(
        x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
        y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
        z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    ):
        tile_type = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)

        a_db = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0, 1])
        b_db = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2, 3])
        c_db = pl.make_tile_group(type=tile_type, addrs=0x20000, mutex_ids=[30, 31])

        with pl.section_vector():
            num_cores = pl.get_block_num()
            core_id = pl.get_block_idx()
            m_tile_num = x.shape[0] // 128
            n_tile_num = x.shape[1] // 128

            for i in pl.range(core_id, m_tile_num, num_cores):
                for j in pl.range(0, n_tile_num, 1):
                    tile_a = a_db.next()
                    tile_b = b_db.next()
                    tile_c = c_db.next()
                    pl.load_tile(tile_a, x, [i, j])
                    pl.load_tile(tile_b, y, [i, j])
                    pl.add(tile_c, tile_a, tile_b)
                    pl.store_tile(z, tile_c, [i, j])
    ''')

EDGE_ADD = HEADER + textwrap.dedent('''\
    @pl.jit
    def edge_add_kernel(
        x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
        y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
        z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
    ):
        tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        a_db = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
        b_db = pl.make_tile_group(type=tt, addrs=[0x8000, 0xC000], mutex_ids=[2, 3])
        c_db = pl.make_tile_group(type=tt, addrs=0x10000, depth=2, mutex_ids=[4, 5])
        with pl.section_vector():
            m = x.shape[0]
            n = x.shape[1]
            m_tiles = (m + 63) // 64
            n_tiles = (n + 63) // 64
            for i in pl.range(pl.get_block_idx(), m_tiles, pl.get_block_num()):
                rows = min(64, m - i * 64)
                for j in pl.range(n_tiles):
                    cols = min(64, n - j * 64)
                    ta = a_db.next()
                    tb = b_db.next()
                    tc = c_db.next()
                    pl.set_validshape(ta, [rows, cols])
                    pl.set_validshape(tb, [rows, cols])
                    pl.set_validshape(tc, [rows, cols])
                    pl.load(ta, x, [i * 64, j * 64])
                    pl.load(tb, y, [i * 64, j * 64])
                    pl.add(tc, ta, tb)
                    pl.store(z, tc, [i * 64, j * 64])
    ''')

INLINE_IF = HEADER + textwrap.dedent('''\
    SCALES = [2.0, -1.0, 0.5]


    @pl.inline
    def transform(dst, src, mode, k):
        if mode == 0:
            pl.muls(dst, src, k)
        elif mode == 1:
            pl.adds(dst, src, k)
        else:
            pl.move(dst, src)
        return mode + 1


    @pl.jit
    def inline_kernel(
        x: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP32],
        z: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP32],
        mode: int,
    ):
        tt = pl.TileType(shape=[32, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        src = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
        dst = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2, 3])
        with pl.section_vector():
            tiles = x.shape[0] // 32
            for i in pl.range(pl.get_block_idx(), tiles, pl.get_block_num()):
                s = src.next()
                d = dst.next()
                pl.load_tile(s, x, [i, 0])
                if mode > 0:
                    used = transform(d, s, 0, SCALES[0])
                elif mode < 0:
                    used = transform(d, s, 1, SCALES[1])
                else:
                    used = transform(d, s, 2, 0.0)
                for k in range(2):
                    pl.adds(d, d, k * 1.0)
                pl.store_tile(z, d, [i, 0])
    ''')

ROW_REDUCE = HEADER + textwrap.dedent('''\
    @pl.jit
    def row_sum_kernel(
        x: pl.Tensor[[pl.DYNAMIC, 256], pl.DT_FP32],
        out: pl.Tensor[[pl.DYNAMIC, 1], pl.DT_FP32],
    ):
        src_t = pl.TileType(shape=[32, 256], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        dst_t = pl.TileType(shape=[32, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, layout=pl.DN)
        src_g = pl.make_tile_group(type=src_t, addrs=0x0, mutex_ids=[0, 1])
        tmp = pl.make_tile(src_t, addr=0x10000)
        dst_g = pl.make_tile_group(type=dst_t, addrs=0x18000, mutex_ids=[2, 3])
        with pl.section_vector():
            rows = x.shape[0]
            for i in pl.range(pl.get_block_idx(), rows // 32, pl.get_block_num()):
                s = src_g.next()
                d = dst_g.next()
                pl.load_tile(s, x, [i, 0])
                pl.sum(d, s, tmp, dim=0)
                pl.store(out, d, [i * 32, 0])
    ''')

KERNELS = {"seed_add": SEED_ADD, "edge_add": EDGE_ADD, "inline_if": INLINE_IF, "row_reduce": ROW_REDUCE}

# Statements that kernels do not support (some are not even valid Python where they land: skipped).
UNSUPPORTED = [
    "try:\n    pass\nexcept Exception:\n    pass",
    "while True:\n    pass",
    "fn = lambda q: q",
    "lst = [q for q in range(3)]",
    "dct = {q: q for q in range(2)}",
    "sset = {q for q in range(2)}",
    "tot = sum((q for q in range(3)))",
    "yield",
    "yield 1",
    "yield from range(2)",
    "global zz",
    "nonlocal zz",
    "break",
    "continue",
    "import math",
    "from os import path",
    "del x",
    "raise ValueError('x')",
    "assert False, 'boom'",
    "with open('/nonexistent/file'):\n    pass",
    "def inner():\n    pass",
    "class C:\n    pass",
    "(w := 3)",
    "print(f'{1}')",
    "return 1",
    "return",
    "async def af():\n    pass",
    "for q in range(1000000000000000000000000000000):\n    pass",
    "for q in [1, 2]:\n    pass\nelse:\n    pass",
    "match 1:\n    case 1:\n        pass",
]

PL_NAMES = sorted(n for n in dir(pl) if not n.startswith("_"))
NUMBERS = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 7, 8, 31, 32, 33, 64, 127, 128, 4096, -128, 0x40000, 1 << 40, 10 ** 30,
                     0.0, 0.5, -2.5, 1e308, 128.0]),
    st.integers(-2 ** 70, 2 ** 70),
    st.floats(allow_nan=False, allow_infinity=False),
)


# ---- AST helpers ----------------------------------------------------------------------------------


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)]


def _body_nodes(tree: ast.Module, kind: type | tuple[type, ...]) -> list[ast.AST]:
    """Nodes of ``kind`` inside function bodies (never annotations or decorators: those run at import)."""
    out = []
    for fn in _functions(tree):
        for stmt in fn.body:
            out.extend(n for n in ast.walk(stmt) if isinstance(n, kind))
    return out


def _stmt_lists(tree: ast.Module) -> list[list[ast.stmt]]:
    lists = []
    for fn in _functions(tree):
        lists.append(fn.body)
        for stmt in fn.body:
            for n in ast.walk(stmt):
                for field in ("body", "orelse", "finalbody"):
                    value = getattr(n, field, None)
                    if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                        lists.append(value)
    return lists


def _pick(data, items: list, label: str):
    assume(items)
    return items[data.draw(st.integers(0, len(items) - 1), label=label)]


# ---- mutations (each edits the tree in place) --------------------------------------------------------


def swap_names(tree: ast.Module, data) -> None:
    names = _body_nodes(tree, ast.Name)
    a = _pick(data, names, "first name")
    b = _pick(data, [n for n in names if n.id != a.id], "second name")
    a.id, b.id = b.id, a.id


def drop_argument(tree: ast.Module, data) -> None:
    call = _pick(data, [c for c in _body_nodes(tree, ast.Call) if c.args or c.keywords], "call")
    slots = [("args", i) for i in range(len(call.args))] + [("keywords", i) for i in range(len(call.keywords))]
    field, i = _pick(data, slots, "argument")
    del getattr(call, field)[i]


def change_number(tree: ast.Module, data) -> None:
    consts = [c for c in _body_nodes(tree, ast.Constant)
              if isinstance(c.value, (int, float)) and not isinstance(c.value, bool)]
    const = _pick(data, consts, "literal")
    const.value = data.draw(NUMBERS, label="new value")


def insert_unsupported(tree: ast.Module, data) -> None:
    body = _pick(data, _stmt_lists(tree), "block")
    pos = data.draw(st.integers(0, len(body)), label="position")
    body[pos:pos] = ast.parse(data.draw(st.sampled_from(UNSUPPORTED), label="statement")).body


def rename_pl_attribute(tree: ast.Module, data) -> None:
    attrs = [a for a in _body_nodes(tree, ast.Attribute) if isinstance(a.value, ast.Name) and a.value.id == "pl"]
    attr = _pick(data, attrs, "pl attribute")
    how = data.draw(st.sampled_from(["other", "plural", "drop_char", "random"]), label="rename")
    if how == "other":
        attr.attr = data.draw(st.sampled_from(PL_NAMES), label="pl name")
    elif how == "plural":
        attr.attr += "s"
    elif how == "drop_char" and len(attr.attr) > 1:
        i = data.draw(st.integers(0, len(attr.attr) - 1), label="char")
        attr.attr = attr.attr[:i] + attr.attr[i + 1:]
    else:
        attr.attr = data.draw(st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True), label="identifier")


def delete_statement(tree: ast.Module, data) -> None:
    body = _pick(data, _stmt_lists(tree), "block")
    del body[data.draw(st.integers(0, len(body) - 1), label="statement")]
    if not body:
        body.append(ast.Pass())


def duplicate_statement(tree: ast.Module, data) -> None:
    body = _pick(data, _stmt_lists(tree), "block")
    i = data.draw(st.integers(0, len(body) - 1), label="statement")
    body.insert(i + 1, copy.deepcopy(body[i]))


def swap_statements(tree: ast.Module, data) -> None:
    body = _pick(data, [b for b in _stmt_lists(tree) if len(b) > 1], "block")
    i = data.draw(st.integers(0, len(body) - 2), label="statement")
    body[i], body[i + 1] = body[i + 1], body[i]


WRAPPERS = ["if pl.get_block_idx() > 0:\n    pass", "if True:\n    pass\nelse:\n    pass",
            "for wrap_k in pl.range(0, 2, 1):\n    pass", "for wrap_k in range(2):\n    pass",
            "with pl.section_vector():\n    pass"]


def wrap_statement(tree: ast.Module, data) -> None:
    """Put a statement under a run-time or compile-time if, a loop, or a section."""
    body = _pick(data, _stmt_lists(tree), "block")
    i = data.draw(st.integers(0, len(body) - 1), label="statement")
    wrapper = ast.parse(data.draw(st.sampled_from(WRAPPERS), label="wrapper")).body[0]
    wrapper.body = [body[i]]
    body[i] = wrapper


MUTATIONS = [swap_names, drop_argument, change_number, insert_unsupported, rename_pl_attribute,
             delete_statement, duplicate_statement, swap_statements, wrap_statement]


# ---- running a mutant ------------------------------------------------------------------------------

_counter = itertools.count()


def load_module(path: Path):
    """Import ``path`` under a fresh module name (the module only defines kernels)."""
    name = f"_pypto_mutant_{os.getpid()}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def kernels_of(module) -> list[JitKernel]:
    return [v for v in vars(module).values() if isinstance(v, JitKernel)]


def check_compiles_or_located(path: Path, source: str) -> bool:
    """Compile every kernel of the mutant; True if all compiled. Fails the test on a bad error."""
    try:
        module = load_module(path)
    except SyntaxError:
        assume(False)  # not Python at all: not counted
    nlines = len(source.splitlines())
    ok = True
    for kernel, arch in itertools.product(kernels_of(module), ("a5", "a2a3")):
        try:
            pl.jit(arch=arch)(kernel.fn).compile()
        except pypto_pro.CompileError as err:
            ok = False
            assert err.loc is not None, f"CompileError without a location: {err}\n--- mutant:\n{source}"
            assert os.path.realpath(err.loc.path) == os.path.realpath(path), (
                f"error located in {err.loc.path}, not in the mutant {path}: {err}\n--- mutant:\n{source}")
            assert 1 <= err.loc.line <= nlines, f"line {err.loc.line} outside 1..{nlines}: {err}\n{source}"
            assert str(err).startswith(f"{err.loc.path}:{err.loc.line}:{err.loc.col + 1}:")
        except Exception as exc:  # anything else escaping the compiler is a frontend bug
            raise AssertionError(f"{type(exc).__name__} escaped the compiler: {exc}\n--- mutant:\n{source}") from exc
    return ok


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("mutants")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYPTO_PRO_BUILD_DIR", str(root / "build"))
        yield root


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_unmutated_kernels_compile(workdir, name):
    path = workdir / f"orig_{name}.py"
    path.write_text(KERNELS[name])
    assert check_compiles_or_located(path, KERNELS[name])


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_unmutated_kernels_run(workdir, arch):
    """The seeds are real kernels: they compute the right thing on small inputs, on both archs."""
    kernels = {}
    for name, text in KERNELS.items():
        path = workdir / f"run_{arch}_{name}.py"
        path.write_text(text)
        (kernel,) = kernels_of(load_module(path))
        kernels[name] = pl.jit(arch=arch)(kernel.fn)
    torch.manual_seed(0)
    x, y = torch.rand(256, 384, dtype=torch.float16), torch.rand(256, 384, dtype=torch.float16)
    z = torch.empty_like(x)
    kernels["seed_add"][None, 2](x, y, z)
    assert torch.equal(z, x + y)
    x, y = torch.rand(100, 130), torch.rand(100, 130)
    z = torch.zeros_like(x)
    kernels["edge_add"][None, 2](x, y, z)
    assert torch.equal(z, x + y)
    x = torch.rand(64, 128)
    for mode, expect in ((1, x * 2.0 + 1.0), (-1, x - 1.0 + 1.0), (0, x + 1.0)):
        z = torch.zeros_like(x)
        kernels["inline_if"][None, 2](x, z, mode)
        torch.testing.assert_close(z, expect)
    x = torch.rand(128, 256)
    out = torch.zeros(128, 1)
    kernels["row_reduce"][None, 2](x, out)
    torch.testing.assert_close(out, x.sum(dim=1, keepdim=True), rtol=1e-5, atol=1e-4)


# ---- text mutations (after unparsing; only on lines of function bodies, which never run at import) ----


def _body_lines(tree: ast.Module) -> list[int]:
    """0-based indices of the lines of every function body."""
    return sorted({i for fn in _functions(tree) for i in range(fn.body[0].lineno - 1, fn.end_lineno)})


def delete_character(lines: list[str], index: int, data) -> None:
    line = lines[index]
    assume(line.strip())
    i = data.draw(st.integers(len(line) - len(line.lstrip()), len(line) - 1), label="character")
    lines[index] = line[:i] + line[i + 1:]


def insert_line(lines: list[str], index: int, data) -> None:
    indent = lines[index][:len(lines[index]) - len(lines[index].lstrip())]
    stmt = data.draw(st.sampled_from([u for u in UNSUPPORTED if "\n" not in u] + ["pass", "x = 1", "pl"]),
                     label="line")
    lines.insert(index + data.draw(st.integers(0, 1), label="after"), indent + stmt)


TEXT_MUTATIONS = [delete_character, insert_line]


def make_mutant(data) -> str:
    name = data.draw(st.sampled_from(sorted(KERNELS)), label="kernel")
    tree = ast.parse(KERNELS[name])
    for _ in range(data.draw(st.integers(1, 3), label="mutation count")):
        data.draw(st.sampled_from(MUTATIONS), label="mutation")(tree, data)
    ast.fix_missing_locations(tree)
    source = ast.unparse(tree) + "\n"
    if data.draw(st.booleans(), label="text mutation"):
        tree = ast.parse(source)  # positions of the unparsed text
        lines = source.splitlines()
        index = _pick(data, _body_lines(tree), "line")
        data.draw(st.sampled_from(TEXT_MUTATIONS), label="text mutation kind")(lines, index, data)
        source = "\n".join(lines) + "\n"
    return source


@contextlib.contextmanager
def memory_cap(extra_bytes: int = 4 << 30):
    """Cap this process's address space at its current size plus ``extra_bytes`` while mutants compile,
    so a mutant that makes the compiler allocate without bound fails as a MemoryError naming the mutant
    (check_compiles_or_located reports it) instead of taking the whole machine down."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = size + extra_bytes if hard == resource.RLIM_INFINITY else min(hard, size + extra_bytes)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _compile_mutant(workdir, data) -> None:
    source = make_mutant(data)
    path = workdir / f"mutant_{next(_counter)}.py"
    path.write_text(source)
    with memory_cap():
        check_compiles_or_located(path, source)


_FUZZ = dict(deadline=None, database=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])


@settings(max_examples=300, derandomize=True, **_FUZZ)
@given(data=st.data())
def test_mutants_fail_only_with_located_compile_errors(workdir, data):
    """The default run: a fixed set of mutants (derandomized), the same on every machine."""
    _compile_mutant(workdir, data)


@pytest.mark.slow
@settings(max_examples=3000, **_FUZZ)
@given(data=st.data())
def test_random_mutants_fail_only_with_located_compile_errors(workdir, data):
    """The long run (``pytest -m slow``): fresh random mutants every time."""
    _compile_mutant(workdir, data)
