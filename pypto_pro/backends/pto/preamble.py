"""The fixed top of every emitted kernel.cpp: includes and the small helpers the code calls."""
from __future__ import annotations

from pypto_pro.backends.pto.sync import CPU_SHIMS

INCLUDES = """#include <cstddef>  // before pto-inst.hpp, which uses the fixed-width types unqualified
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace pto;"""

HELPERS = """// ---- helpers: Python scalar semantics and valid-shape bookkeeping ------------------------
namespace {

template <typename A, typename B>
AICORE inline std::common_type_t<A, B> pp_min(A a, B b)
{
    using T = std::common_type_t<A, B>;
    return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(a) : static_cast<T>(b);
}

template <typename A, typename B>
AICORE inline std::common_type_t<A, B> pp_max(A a, B b)
{
    using T = std::common_type_t<A, B>;
    return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(b) : static_cast<T>(a);
}

// Python's // and % (floor), for the index arithmetic of the kernel.
template <typename A, typename B>
AICORE inline std::common_type_t<A, B> pp_floordiv(A a, B b)
{
    if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
        const auto q = a / b;
        return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
        return std::floor(static_cast<std::common_type_t<A, B>>(a) / b);
    }
}

template <typename A, typename B>
AICORE inline std::common_type_t<A, B> pp_mod(A a, B b)
{
    if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
        const auto r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
        return a - b * std::floor(static_cast<std::common_type_t<A, B>>(a) / b);
    }
}

// values[i] of a constant table (e.g. the mutex id of a run-time ring slot).
template <int64_t... Values>
AICORE inline int64_t pp_pick(int64_t i)
{
    constexpr int64_t table[] = {Values...};
    return table[i];
}

// An elementwise result covers its first source, clipped to the destination's declared shape.
template <typename Dst, typename Src>
AICORE inline void pp_valid_from(Dst& dst, Src& src, int64_t declRows, int64_t declCols)
{
    dst.SetValidShape(pp_min(static_cast<int64_t>(src.GetValidRow()), declRows),
                      pp_min(static_cast<int64_t>(src.GetValidCol()), declCols));
}

// TSTORE writes the tile's valid region: narrow it to the in-bounds window for the store only.
template <typename Gm, typename TileT>
AICORE inline void pp_store(Gm& gm, TileT& tile, int64_t rows, int64_t cols)
{
    const unsigned validRows = tile.GetValidRow(), validCols = tile.GetValidCol();
    tile.SetValidShape(rows, cols);
    TSTORE(gm, tile);
    tile.SetValidShape(validRows, validCols);
}

// FFTS message of a cross-core set (a2a3): mode, flag id (as PTO-ISA's a2a3 getFFTSMsg builds it).
AICORE inline uint64_t pp_ffts_msg(uint64_t mode, uint64_t flagId)
{
    return 0x1 + ((mode & 0x3) << 4) + ((flagId & 0xf) << 8);
}

}  // namespace"""


def cpu_shims(used: set[str]) -> str:
    if not used:
        return ""
    lines = ["#if defined(__CPU_SIM)",
             "// PTO-ISA's CPU model runs each core's instructions in order and synchronously (its",
             "// set_flag / wait_flag are no-ops); it does not declare these, so they are no-ops here too.",
             *(CPU_SHIMS[n] for n in sorted(used)),
             "#endif"]
    return "\n".join(lines)
