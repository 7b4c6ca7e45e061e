"""What a timed launch counts across its blocks: L2 reuse of GM windows and the traffic / work totals.

The recorders count every GM window's accesses into one :class:`L2Tracker` while the blocks are
logged; only once every block is logged can each access be priced (its miss fraction depends on
how often the whole launch touches the window), so pricing is a step of its own after logging.
"""
from __future__ import annotations

from pypto_pro.backends.sim.inst import Inst


class L2Tracker:
    """How often each global-memory window is read, and written, during the launch. Cores run
    concurrently, so a window read n times costs one HBM fetch shared by its n reads: each read is
    priced as the expected cost with miss fraction 1/n (fewer hits when the unique bytes exceed
    L2's capacity). L2 is write-back, so a window written n times (a Cube<->Vector workspace slot)
    reaches HBM once: each write lands in L2 and carries 1/n of the write-back. A window written
    once (an output) pays the full HBM cost, as before. Source for the write-back behaviour:
    PTO-ISA's flash-attention notes (kernels/manual/common/flash_atten/README.md) on the
    intermediate FIFO buffers and their L2 write-back."""

    def __init__(self, model) -> None:
        self.model = model
        # (GM object, rect, is_write) -> [accesses to that window, its bytes]; counted by the recorders
        self.windows: dict = {}
        self._resident: float | None = None

    def miss_fractions(self, windows: list, stats: BlockStats) -> tuple[float, ...]:
        """Fraction of each access (in order) that reaches HBM, once every access of the launch is
        counted; adds the HBM and L2-hit bytes of these accesses to ``stats``."""
        if self._resident is None:
            unique = sum(nbytes for _, nbytes in self.windows.values())
            self._resident = min(1.0, self.model.capacity.value / unique) if unique else 1.0
        resident, out = self._resident, []
        keep = out.append
        hbm = hit = 0.0
        for uses, nbytes in map(self.windows.__getitem__, windows):  # (the same sums, in the same order)
            frac = 1.0 - resident * (1.0 - 1.0 / uses)
            keep(frac)
            hbm += frac * nbytes
            hit += (1.0 - frac) * nbytes
        stats.gm_bytes += hbm
        stats.l2_hit_bytes += hit
        return tuple(out)

    @staticmethod
    def apply(insts: list[Inst], fractions: tuple[float, ...]) -> None:
        """Set the cycles and GM-port share of recorded GM accesses from their miss fractions."""
        for inst, frac in zip(insts, fractions):
            miss, miss_port, hit = inst.l2
            inst.cycles += frac * miss + (1.0 - frac) * hit - miss
            inst.port = frac * miss_port


class BlockStats:
    """Traffic and work of the recorded instructions (summed over the launch)."""

    def __init__(self) -> None:
        self.path_bytes: dict[str, int] = {}
        self.flops = 0
        self.vector_ideal_cycles = 0.0
        self.cube_ideal_cycles = 0.0
        self.gm_bytes = 0          # bytes that reached HBM (L2 misses and stores)
        self.l2_hit_bytes = 0
        self.instructions = 0
