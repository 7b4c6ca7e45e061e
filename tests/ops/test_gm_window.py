"""``gm_window.window``: its one-pass path for windows inside the tensor gives what the checked
path gives (index, GM rect, transpose flag); windows that leave the tensor still fault, located."""
import itertools

import numpy as np
import pytest

from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.ops import gm_window


class _Op:
    loc = None
    attrs: dict = {}


def _reference(shape, offs, rows, cols, axes):
    """The window's NumPy index and rect, spelled out (None when it leaves the tensor)."""
    a0, a1 = axes
    ext = {0: cols} if len(shape) == 1 else {a0: rows, a1: cols}
    for axis, o in enumerate(offs):
        n = ext.get(axis, 1)
        if not (0 <= o < shape[axis] or o == shape[axis] and n == 0) or o + n > shape[axis]:
            return None
    idx = tuple(slice(o, o + ext[a]) if a in ext else o for a, o in enumerate(offs))
    rect = tuple((o, o + ext.get(a, 1)) for a, o in enumerate(offs))
    return idx, rect, len(shape) > 1 and a0 > a1


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_window_matches_reference(ndim):
    rng = np.random.default_rng(ndim)
    shape = tuple(int(x) for x in rng.integers(1, 6, ndim))
    g = np.zeros(shape, np.float16)
    for axes in (list(itertools.permutations(range(ndim), 2)) if ndim > 1 else [(0, 0)]):
        for _ in range(300):
            offs = tuple(int(x) for x in rng.integers(-1, 7, ndim))
            rows, cols = (int(x) for x in rng.integers(0, 5, 2))
            want = _reference(shape, offs, rows, cols, axes)
            if want is None:
                with pytest.raises(OutOfBoundsError, match="'x': (offset|the .* window)"):
                    gm_window.window(_Op(), g, offs, rows, cols, axes, "load from", "x")
            else:
                got = gm_window.window(_Op(), g, offs, rows, cols, axes, "load from", "x")
                assert got == want
                assert g[got[0]].shape == tuple(
                    s.stop - s.start for s in got[0] if isinstance(s, slice))
