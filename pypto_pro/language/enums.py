"""Memory spaces and pipes: the hardware vocabulary shared by the DSL, IR, arch tables and backends."""
from __future__ import annotations

import enum


class MemorySpace(enum.Enum):
    """On-chip buffer a tile lives in (PTO-ISA ``TileType``)."""

    Vec = "Vec"      # UB: Vector engine unified buffer
    Mat = "Mat"      # L1: Cube input staging buffer
    Left = "Left"    # L0A: Cube left operand
    Right = "Right"  # L0B: Cube right operand
    Acc = "Acc"      # L0C: Cube accumulator
    Bias = "Bias"    # bias table

    def __repr__(self) -> str:
        return f"pl.MemorySpace.{self.name}"

    # Members are singletons compared by identity: hash by identity too (C speed; the default
    # Enum hash runs Python code, which the simulator's hot path would pay per dict lookup).
    __hash__ = object.__hash__


class PipeType(enum.Enum):
    """Independent in-order instruction pipes of a core (PTO-ISA ``event.hpp``)."""

    MTE1 = "MTE1"  # L1 -> L0A/L0B
    MTE2 = "MTE2"  # GM -> UB / L1
    MTE3 = "MTE3"  # UB -> GM (and UB -> L1 on a5)
    V = "V"        # vector compute
    M = "M"        # cube matmul
    FIX = "FIX"    # L0C -> GM / UB / L1
    S = "S"        # scalar

    def __repr__(self) -> str:
        return f"pl.PipeType.{self.name}"

    # Members are singletons compared by identity: hash by identity too (C speed; the default
    # Enum hash runs Python code, which the simulator's hot path would pay per dict lookup).
    __hash__ = object.__hash__


class SectionKind(enum.Enum):
    """Which engine's program a ``with pl.section_*()`` block belongs to."""

    VECTOR = "vector"
    CUBE = "cube"
