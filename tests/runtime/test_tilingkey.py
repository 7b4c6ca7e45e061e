"""TilingKey: schema checks at decoration, launch-time selection, one program per key."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, LaunchError
from pypto_pro.runtime.tilingkey import TilingKeyField, TilingKeySchema


class Key:
    ROWS = TilingKeyField(bits=2, values=[16, 32, 64])
    SCALE = TilingKeyField(bits=1, values=[1, 2])

    def is_valid(self, key):
        return not (key.ROWS == 64 and key.SCALE == 2)


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


@pytest.mark.parametrize("rows,scale", [(16, 1), (16, 2), (32, 2), (64, 1)])
def test_each_key_gets_its_own_program(rows, scale):
    k = pl.jit(scaled_copy, tiling_key=Key)
    x = np.random.default_rng(0).random((100, 64)).astype(np.float32)
    z = np.zeros_like(x)
    k[None, 3, {"ROWS": rows, "SCALE": scale}](x, z)
    np.testing.assert_array_equal(z, x * scale)
    programs = k.compile(tiling_key={"ROWS": rows, "SCALE": scale}).programs
    ops = [s.op for s in __import__("pypto_pro.ir.nodes", fromlist=["walk_stmts"]).walk_stmts(
        next(iter(programs.values())).body) if hasattr(s, "op")]
    assert ("muls" in ops) == (scale == 2)  # the key folded: no branch on SCALE remains
    assert len(k._cache) == 1


def test_combinations_and_encoding():
    schema = TilingKeySchema(Key)
    combos = list(schema.combinations())
    assert {"ROWS": 64, "SCALE": 2} not in combos and len(combos) == 5
    assert schema.encode({"ROWS": 32, "SCALE": 2}) == 1 | (1 << 2)
    assert "scaled_copy_tiling_key" in schema.header("scaled_copy")


@pytest.mark.parametrize("key,needle", [
    ({"ROWS": 64, "SCALE": 2}, "rejected by Key.is_valid"),
    ({"ROWS": 48, "SCALE": 1}, "ROWS=48 is not one of [16, 32, 64]"),
    ({"ROWS": 16}, "field 'SCALE' is missing"),
    ({"ROWS": 16, "SCALE": 1, "X": 1}, "no field 'X'"),
    ([16, 1], "must be a dict"),
])
def test_bad_keys_are_launch_errors(key, needle):
    k = pl.jit(scaled_copy, tiling_key=Key)
    x = np.ones((16, 64), np.float32)
    z = np.zeros_like(x)
    with pytest.raises(LaunchError, match=needle.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        k[None, 1, key](x, z)
    assert not z.any()


def test_key_required_and_refused():
    x = np.ones((16, 64), np.float32)
    with pytest.raises(LaunchError, match="specialised by Key"):
        pl.jit(scaled_copy, tiling_key=Key)[None, 1](x, np.zeros_like(x))


def _schema_error(cls, needle):
    with pytest.raises(CompileError, match=needle):
        pl.jit(scaled_copy, tiling_key=cls)


def test_schema_errors_at_decoration():
    _schema_error(3, "must be a class")
    _schema_error(type("Empty", (), {}), "declares no TilingKeyField")
    _schema_error(type("B0", (), {"A": TilingKeyField(bits=0, values=[1])}), "bits must be a positive int")
    _schema_error(type("E", (), {"A": TilingKeyField(bits=1, values=[])}), "non-empty list")
    _schema_error(type("R", (), {"A": TilingKeyField(bits=2, values=[1, 1])}), "repeat a value")
    _schema_error(type("N", (), {"A": TilingKeyField(bits=2, values=[1.5])}), "is not an int")
    _schema_error(type("Bo", (), {"A": TilingKeyField(bits=2, values=[True])}), "is not an int")
    _schema_error(type("M", (), {"A": TilingKeyField(bits=1, values=[1, 2, 3])}), "do not fit in 1 bit")
    _schema_error(type("W", (), {f"F{i}": TilingKeyField(bits=9, values=[0]) for i in range(8)}), "72 bits")
    _schema_error(type("V", (), {"A": TilingKeyField(bits=1, values=[0]), "is_valid": 3}), "must be a method")
