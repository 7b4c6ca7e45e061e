"""The global-memory checker on hand-made accesses: conflicts within a block (happens-before by
vector clocks), across blocks, and retiring accesses that a later covering write follows."""
import pytest

from pypto_pro import RaceError
from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, OP, Inst
from pypto_pro.backends.sim.scheduler import Reporter

A, B = 0, 1  # two queues of one block
WIN = ((0, 16), (0, 64))


def _inst(name: str, pipe: int, vc: tuple) -> Inst:
    inst = Inst(0, pipe, OP, 1.0, None, name)
    inst.vc = vc + (0,) * (NPIPES - len(vc))
    return inst


def _checker(mode: str = "raise") -> tuple[GlobalChecker, Reporter]:
    reporter = Reporter(mode)
    return GlobalChecker(reporter), reporter


def _entries(checker: GlobalChecker) -> list[str]:
    return sorted(e[4].name for writes, reads in checker.cells.values() for e in writes + reads)


def test_a_covering_ordered_write_retires_what_it_follows():
    gm, _ = _checker()
    gm.access(_inst("w1", A, (1, 0)), 0, 0, "w", WIN, True)
    gm.access(_inst("r1", B, (1, 1)), 0, 0, "w", WIN, False)     # after w1 (saw A's clock 1)
    gm.access(_inst("w2", A, (2, 1)), 0, 0, "w", WIN, True)      # after r1 (saw B's clock 1)
    assert _entries(gm) == ["w2"]


def test_a_race_after_retiring_is_still_reported_with_the_covering_write():
    gm, _ = _checker()
    gm.access(_inst("w1", A, (1, 0)), 0, 0, "w", WIN, True)
    gm.access(_inst("w2", A, (2, 0)), 0, 0, "w", WIN, True)
    assert _entries(gm) == ["w2"]
    with pytest.raises(RaceError, match=r"global 'w'\[0:16, 0:64\]") as err:
        gm.access(_inst("r", B, (1, 1)), 0, 0, "w", WIN, False)  # saw only w1: not ordered after w2
    assert "w2" in str(err.value)


def test_a_partial_write_retires_nothing_it_does_not_cover():
    gm, _ = _checker()
    gm.access(_inst("w1", A, (1, 0)), 0, 0, "w", WIN, True)
    gm.access(_inst("w2", A, (2, 0)), 0, 0, "w", ((0, 8), (0, 64)), True)
    assert _entries(gm) == ["w1", "w2"]
    gm.access(_inst("r", B, (1, 1)), 0, 0, "w", ((8, 16), (0, 64)), False)  # overlaps only w1: ordered
    with pytest.raises(RaceError, match="w2"):
        gm.access(_inst("r2", B, (1, 2)), 0, 0, "w", ((4, 12), (0, 64)), False)  # overlaps w2, unordered


def test_other_blocks_are_never_ordered_and_never_retired():
    gm, reporter = _checker("warn")
    gm.access(_inst("b0", A, (1, 0)), 0, 0, "z", WIN, True)
    gm.access(_inst("b1", A, (5, 5)), 1, 0, "z", WIN, True)   # another block: clocks are not comparable
    assert len(reporter.faults) == 1 and "two blocks write the same bytes" in str(reporter.faults[0])
    assert _entries(gm) == ["b0", "b1"]


def test_reads_alone_never_conflict():
    gm, reporter = _checker("warn")
    for block in range(4):
        gm.access(_inst(f"r{block}", A, (1, 0)), block, 0, "x", WIN, False)
    assert not reporter.faults


def test_concurrent_atomic_adds_may_overlap_but_nothing_else_may():
    gm, _ = _checker()
    gm.access(_inst("a0", A, (1, 0)), 0, 0, "acc", WIN, ATOMIC)
    gm.access(_inst("a1", A, (1, 0)), 1, 0, "acc", WIN, ATOMIC)  # another block, unordered: atomics commute
    with pytest.raises(RaceError, match="two blocks write the same bytes"):
        gm.access(_inst("w", A, (1, 0)), 2, 0, "acc", WIN, True)   # a plain write among atomic adders
    gm2, _ = _checker()
    gm2.access(_inst("a0", A, (1, 0)), 0, 0, "acc", WIN, ATOMIC)
    with pytest.raises(RaceError, match="one block writes bytes another reads"):
        gm2.access(_inst("r", A, (1, 0)), 1, 0, "acc", WIN, False)  # a read is not ordered after the adds
