"""The seed Add specialised by a TilingKey and a dtype variable: tile rows and buffering depth are
chosen at launch, the element type follows the arguments (fp16 or bf16); all fold to constants,
one program (and one kernel.cpp) per combination.

    python examples/add_tiled.py                                         # run every key on the simulator
    pypto-pro build examples/add_tiled.py::add_tiled --arch a5 --out dist/   # release: every key's C++
"""
import ml_dtypes
import numpy as np

import pypto_pro.language as pl
from pypto_pro.runtime.tilingkey import TilingKeyField


class AddKey:
    TILE_M = TilingKeyField(bits=2, values=[32, 64, 128])
    DEPTH = TilingKeyField(bits=1, values=[1, 2])

    def is_valid(self, key):
        tile_m, depth = key  # the field values, in definition order
        return tile_m * 128 * 2 * depth <= 0x10000  # a ring must fit before the next one


T = pl.DTypeVar("T", [pl.DT_FP16, pl.DT_BF16])


@pl.jit(tiling_key=AddKey)
def add_tiled(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], T],
              y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], T],
              z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], T]):
    tt = pl.TileType(shape=[TILE_M, 128], dtype=T, target_memory=pl.MemorySpace.Vec)  # noqa: F821
    a_g = pl.make_tile_group(type=tt, addrs=0x00000, depth=DEPTH, mutex_ids=[0, 1][:DEPTH])  # noqa: F821
    b_g = pl.make_tile_group(type=tt, addrs=0x10000, depth=DEPTH, mutex_ids=[2, 3][:DEPTH])  # noqa: F821
    c_g = pl.make_tile_group(type=tt, addrs=0x20000, depth=DEPTH, mutex_ids=[4, 5][:DEPTH])  # noqa: F821
    with pl.section_vector():
        m, n = x.shape[0], x.shape[1]
        m_tiles = (m + TILE_M - 1) // TILE_M  # noqa: F821
        n_tiles = (n + 127) // 128
        for i in pl.range(pl.get_block_idx(), m_tiles, pl.get_block_num()):
            for j in pl.range(0, n_tiles, 1):
                a = a_g.next()
                b = b_g.next()
                c = c_g.next()
                shape = [min(TILE_M, m - i * TILE_M), min(128, n - j * 128)]  # noqa: F821  (tail tiles)
                pl.set_validshape(a, shape)
                pl.set_validshape(b, shape)
                pl.set_validshape(c, shape)
                pl.load_tile(a, x, [i, j])
                pl.load_tile(b, y, [i, j])
                pl.add(c, a, b)
                pl.store_tile(z, c, [i, j])


def main() -> None:
    rng = np.random.default_rng(0)
    ok = True
    for dtype in (np.float16, ml_dtypes.bfloat16):
        x = rng.random((1000, 300)).astype(dtype)
        y = rng.random((1000, 300)).astype(dtype)
        for tile_m in (32, 64, 128):
            for depth in (1, 2):
                z = np.zeros_like(x)
                report = add_tiled[None, 8, {"TILE_M": tile_m, "DEPTH": depth}](x, y, z)
                exact = bool(np.array_equal(z, x + y))
                ok &= exact
                print(f"{np.dtype(dtype).name:8} TILE_M={tile_m:3} DEPTH={depth}: {report.us:7.1f} us modeled, "
                      f"exact={exact}")
    print(f"add_tiled matches numpy for every key and dtype: {ok}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
