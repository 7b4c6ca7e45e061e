"""Auto sync (a2a3 event pairs) around while loops, break, continue and return: the ring pattern
is kept where no jump can leave a generation half done, and given up (ownership transfer) where
one can; a return inside a ring's loop nest drains the per-slot events first."""
import pypto_pro.language as pl
from pypto_pro.ir.nodes import Break, Return, SyncOp, While, walk_stmts
from pypto_pro.language.enums import SectionKind
from control_flow_kernels import break_continue, early_return, nested_while_add


def program(fn):
    return pl.jit(fn, arch="a2a3").compile().programs[SectionKind.VECTOR]


def origins(prog):
    return [s.origin for s in walk_stmts(prog.body) if isinstance(s, SyncOp)]


def test_ring_pattern_inside_nested_while_loops():
    prog = program(nested_while_add)
    top = prog.body
    loop_at = next(i for i, s in enumerate(top) if isinstance(s, While))
    presets = [i for i, s in enumerate(top) if isinstance(s, SyncOp) and "pre-set" in s.origin]
    drains = [i for i, s in enumerate(top) if isinstance(s, SyncOp) and "drain" in s.origin]
    assert len(presets) == len(drains) == 6  # 3 groups x 2 slots, around the outer while
    assert all(i < loop_at for i in presets) and all(i > loop_at for i in drains)
    assert not any("->" in o and ":" in o and "hand back" in o for o in origins(prog))


def test_break_in_the_middle_of_a_generation_falls_back_to_ownership():
    prog = program(break_continue)
    found = origins(prog)
    assert not any("pre-set" in o for o in found)           # no ring: a flag could be left pending
    hand_backs = [s for s in walk_stmts(prog.body) if isinstance(s, SyncOp) and s.origin.startswith("g: break")]
    assert hand_backs, "a break hands ownership back to the loop's owner before it jumps"
    assert any(isinstance(s, Break) for s in walk_stmts(prog.body))


def test_return_inside_a_ring_nest_drains_first():
    prog = program(early_return)
    body = list(walk_stmts(prog.body))
    returns = [i for i, s in enumerate(body) if isinstance(s, Return)]
    assert returns
    for i in returns:
        before = [s for s in body[max(0, i - 8):i] if isinstance(s, SyncOp)]
        assert sum("drain" in s.origin and "(return)" in s.origin for s in before) >= 2
