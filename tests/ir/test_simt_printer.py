"""The IR dumps show a SIMT launch with its function's body under it."""
import pypto_pro.language as pl
from pypto_pro.ir.printer import kernel_str
from pypto_pro.language.enums import SectionKind

N = 32


@pl.simt.function(max_threads=N)
def _body(dst: pl.Tile[[2, N], pl.DT_FP32], n: pl.DT_UINT32):
    t = pl.simt.thread_idx()
    if t.x < n:
        dst[1, t.x] = dst.valid_shape[1] * 1.0


@pl.jit(arch="a5")
def kernel(out: pl.Tensor[[2, N], pl.DT_FP32], n: pl.DT_UINT32):
    dst = pl.make_tile(pl.TileType(shape=[2, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0,
                       size=2 * N * 4)
    with pl.section_vector():
        pl.simt.launch(_body, threads=N, args=(dst, n))


def test_the_launch_lists_its_simt_body():
    text = kernel_str(kernel.compile().programs[SectionKind.VECTOR])
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "simt_launch(dst, n" in line)
    body = lines[at + 1:at + 4]
    assert body[0].lstrip().startswith("if (pl.simt.thread_idx().x < n):"), body
    assert "dst.flat[" in body[1] and "dst.valid_shape[1]" in body[1], body
