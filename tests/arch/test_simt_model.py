"""The a5 SIMT engine's numbers are data with their sources; a2a3 has no SIMT engine."""
import dataclasses

from pypto_pro.arch import resolve_arch
from pypto_pro.arch.describe import describe


def test_a5_simt_numbers_are_sourced_and_described():
    simt = resolve_arch("a5").simt
    assert simt is not None
    assert (simt.max_threads.value, simt.warp_size.value, simt.schedulers.value) == (2048, 32, 4)
    text = describe(resolve_arch("a5"))
    for f in dataclasses.fields(simt):
        v = getattr(simt, f.name)
        assert v.source, f.name
        assert f"SIMT {f.name.replace('_', ' ')}" in text
    assumed = {f.name for f in dataclasses.fields(simt) if getattr(simt, f.name).assumed}
    assert assumed == {"issue_per_cycle", "ub_latency"}


def test_a2a3_has_no_simt_engine():
    assert resolve_arch("a2a3").simt is None
    assert "SIMT" not in describe(resolve_arch("a2a3"))
