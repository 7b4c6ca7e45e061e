"""Instructions for random GM-checker access sequences (the fast-path tests of gm_checker compare a path
with its reference on the same sequence): a fresh instruction per access, or one made earlier again, as a
replayed block's accesses reuse its leader's instructions."""
from __future__ import annotations

from pypto_pro.backends.sim.inst import NPIPES, OP, Inst


def make_inst(name: str, pipe: int, vc, drained: int, start: int, end: int) -> Inst:
    inst = Inst(0, pipe, OP, 1.0, None, name)
    inst.vc = tuple(vc) + (0,) * (NPIPES - len(vc))
    inst.drained, inst.start, inst.end = drained, start, end
    return inst


def sequence_inst(made: list, k: int, pipe: int, clocks, drained: int, start: int, reuse: int) -> Inst:
    """The ``k``-th access's instruction: ``made[reuse]`` again when that exists, else a new one on ``pipe``
    whose clocks on the first queues of the cube and the two vector cores are ``clocks`` (appended to ``made``)."""
    if 0 <= reuse < len(made):
        return made[reuse]
    vc = [0] * (2 * NPIPES + 2)
    for p, c in zip((0, 1, NPIPES + 1), clocks):
        vc[p] = c
    vc[pipe] = max(vc[pipe], 1) + k % 3
    inst = make_inst(f"i{k}", pipe, vc, drained, start, start + 2)
    made.append(inst)
    return inst
