"""TilingKey: the real schema API and errors, launch-time selection, one program per key."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, LaunchError
from pypto_pro.ir.nodes import walk_stmts
from pypto_pro.runtime.tilingkey import TilingKeyField, TilingKeySchema

LIMIT = 7  # a module-level variable: a tiling-key field may not take its name


class Key:
    ROWS = TilingKeyField(bits=2, values=[16, 32, 64])
    SCALE = TilingKeyField(bits=1, values=[1, 2])

    def is_valid(self, key):
        rows, scale = key  # a tuple, in field order
        return not (rows == 64 and scale == 2)


def scaled_copy(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([ROWS, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,  # noqa: F821
                           mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), (x.shape[0] + ROWS - 1) // ROWS, pl.get_block_num()):  # noqa: F821
            t = g.next()
            pl.set_validshape(t, [min(ROWS, x.shape[0] - i * ROWS), 64])  # noqa: F821  (the tail tile)
            pl.load_tile(t, x, [i, 0])
            if SCALE == 2:  # noqa: F821  (folded: no run-time branch is left)
                pl.muls(t, t, 2.0)
            pl.store_tile(z, t, [i, 0])


@pytest.mark.parametrize("rows,scale", [(16, 1), (32, 2), (64, 1)])
def test_each_key_gets_its_own_program(rows, scale):
    k = pl.jit(scaled_copy, tiling_key=Key)
    x = np.random.default_rng(0).random((100, 64)).astype(np.float32)
    z = np.zeros_like(x)
    k[None, 3, {"ROWS": rows, "SCALE": scale}](x, z)
    np.testing.assert_array_equal(z, x * scale)
    programs = k.compile(tiling_key={"ROWS": rows, "SCALE": scale}).programs
    ops = [s.op for s in walk_stmts(next(iter(programs.values())).body) if hasattr(s, "op")]
    assert ("muls" in ops) == (scale == 2)  # the key folded: no branch on SCALE remains
    assert len(k._compiled_by_signature) == 1
    assert k.tilingkey_schema.cls is Key and k.datatype_schema is None


def test_schema_api():
    schema = TilingKeySchema(Key)
    assert schema.field_names() == ["ROWS", "SCALE"] and schema.cls_name == "Key"
    assert schema.enumerate_valid() == [(16, 1), (16, 2), (32, 1), (32, 2), (64, 1)]
    assert schema.pack({"ROWS": 32, "SCALE": 2}) == 1 | (1 << 2)  # value indices, first field lowest
    assert [f.offset for f in schema.fields] == [0, 2]
    assert schema.is_valid((64, 2)) is False and schema.is_valid((64, 1)) is True
    assert "scaled_copy_tiling_key" in schema.header("scaled_copy")
    assert list(schema.combinations())[1] == {"ROWS": 16, "SCALE": 2}


def test_values_are_packed_by_index_not_by_value():
    class Wide:
        OpType = TilingKeyField(bits=2, values=[0, 3])  # 3 fits, as index 1

    assert TilingKeySchema(Wide).pack({"OpType": 3}) == 1


def test_classmethod_is_valid():
    class C:
        a = TilingKeyField(bits=2, values=[0, 1, 2])
        b = TilingKeyField(bits=2, values=[0, 1, 2])

        @classmethod
        def is_valid(cls, key):
            return not (key[0] == 0 and key[1] == 0)

    assert len(TilingKeySchema(C).enumerate_valid()) == 8


@pytest.mark.parametrize("key,needle", [
    ({"ROWS": 64, "SCALE": 2}, "did not pass Key.is_valid"),
    ({"ROWS": 48, "SCALE": 1}, "field 'ROWS' value 48 is not a candidate; allowed: [16, 32, 64]"),
    ({"ROWS": 16}, "keys ['ROWS'] do not match schema fields ['ROWS', 'SCALE']"),
    ({"ROWS": 16, "SCALE": 1, "X": 1}, "do not match schema fields"),
    ([16, 1], "must be specified as a dict, got list"),
])
def test_bad_keys_are_value_errors(key, needle):
    k = pl.jit(scaled_copy, tiling_key=Key)
    x = np.ones((16, 64), np.float32)
    z = np.zeros_like(x)
    with pytest.raises(LaunchError) as err:
        k[None, 1, key](x, z)
    assert needle in str(err.value) and isinstance(err.value, ValueError)
    assert not z.any()


def test_key_required_and_direct_call_refused():
    k = pl.jit(scaled_copy, tiling_key=Key)
    x = np.ones((16, 64), np.float32)
    with pytest.raises(ValueError, match=r"Expected kernel\[stream, block_dim, tilingkey\]"):
        k[None, 1](x, np.zeros_like(x))
    with pytest.raises(ValueError, match="cannot be called directly; use bracket-launch syntax"):
        k(x, np.zeros_like(x))


def _schema_error(cls, needle):
    with pytest.raises(CompileError, match=needle) as err:
        pl.jit(scaled_copy, tiling_key=cls)
    assert isinstance(err.value, ValueError)


def test_schema_errors_at_decoration():
    _schema_error(3, "tiling_key must be a class, got int")
    _schema_error(type("Empty", (), {}), "has no TilingKeyField members")
    _schema_error(type("B0", (), {"A": TilingKeyField(bits=0, values=[1])}), "must have bits > 0, got 0")
    _schema_error(type("E", (), {"A": TilingKeyField(bits=1, values=[])}), "must have a non-empty 'values' list")
    _schema_error(type("R", (), {"A": TilingKeyField(bits=2, values=[1, 1])}), "values must be unique")
    _schema_error(type("N", (), {"A": TilingKeyField(bits=2, values=[1.5])}), "values must be ints, got 1.5")
    _schema_error(type("Bo", (), {"A": TilingKeyField(bits=2, values=[True])}), "values must be ints, got True")
    _schema_error(type("M", (), {"A": TilingKeyField(bits=1, values=[1, 2, 3])}),
                  "has 3 candidates, exceeding the 2 representable by 1 bits")
    _schema_error(type("W", (), {"a": TilingKeyField(bits=32, values=[0]), "b": TilingKeyField(bits=33, values=[0])}),
                  "uses 65 bits, exceeding the 64-bit limit")
    _schema_error(type("V", (), {"A": TilingKeyField(bits=1, values=[0]), "is_valid": 3}),
                  "non-callable 'is_valid' member")


def test_exactly_64_bits_is_allowed():
    class Tk64:
        a = TilingKeyField(bits=32, values=[0, 1])
        b = TilingKeyField(bits=32, values=[0, 1])

    assert TilingKeySchema(Tk64).pack({"a": 1, "b": 1}) == 1 | (1 << 32)


def test_field_name_conflicts():
    class ParamName:
        x = TilingKeyField(bits=1, values=[0, 1])

    class ModuleName:
        LIMIT = TilingKeyField(bits=1, values=[0, 1])

    class FunctionName:
        scaled_copy = TilingKeyField(bits=1, values=[0, 1])  # a callable of the module: allowed

    _schema_error(ParamName, "conflict with kernel parameter name")
    _schema_error(ModuleName, "conflict with module-level variable name")
    pl.jit(scaled_copy, tiling_key=FunctionName)


def test_keyword_only_field():
    with pytest.raises(TypeError):
        TilingKeyField(1, [0, 1])  # type: ignore[misc]


def test_failing_is_valid_is_reported():
    class Broken:
        A = TilingKeyField(bits=1, values=[0, 1])

        def is_valid(self, key):
            return key.A == 0  # the real API passes a tuple: this raises

    k = pl.jit(scaled_copy, tiling_key=type("K", (), {"ROWS": TilingKeyField(bits=1, values=[16]),
                                                      "SCALE": TilingKeyField(bits=1, values=[1]),
                                                      "is_valid": Broken.is_valid}))
    x = np.ones((16, 64), np.float32)
    with pytest.raises(LaunchError, match="is_valid.*raised AttributeError"):
        k[None, 1, {"ROWS": 16, "SCALE": 1}](x, np.zeros_like(x))
