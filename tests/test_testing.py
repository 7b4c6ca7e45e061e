"""pypto_pro.testing: ULP distances for NumPy arrays and torch tensors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from pypto_pro.testing import max_ulp_distance, ulp_diff


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16, np.float32, ml_dtypes.float8_e4m3fn])
def test_neighbours_are_one_ulp_apart_across_zero_and_signs(dt):
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dt).itemsize]
    x = np.array([1.0, -1.0, 0.0, 2.0], dt)
    step = (x.view(u) + u(1)).view(dt)   # the next representable magnitude, same sign
    assert ulp_diff(x, step).tolist() == [1, 1, 1, 1]
    assert ulp_diff(np.array([0.0], dt), np.array([-0.0], dt)).tolist() == [0]
    tiny = np.array([1], u).view(dt)     # the smallest positive subnormal
    assert ulp_diff(tiny, -tiny).tolist() == [2]   # +tiny -> +0 == -0 -> -tiny


def test_fp16_steps_and_nan():
    a = np.array([1.0, 1.0, np.nan, np.nan], np.float16)
    b = np.array([1.0, 1.0 + 2 ** -10 * 3, np.nan, 1.0], np.float16)
    d = ulp_diff(a, b)
    assert d[:3].tolist() == [0, 3, 0] and d[3] > 0   # NaN pairs match; NaN vs a number does not
    assert max_ulp_distance(np.zeros(0, np.float16), np.zeros(0, np.float16)) == 0


def test_torch_tensors_including_bf16():
    y = torch.tensor([1.0, 2.0], dtype=torch.float16)
    assert max_ulp_distance(y, torch.nextafter(y, torch.tensor(4.0, dtype=torch.float16))) == 1
    b = torch.tensor([1.0, -3.0], dtype=torch.bfloat16)
    assert max_ulp_distance(b, b) == 0
    assert max_ulp_distance(b, torch.tensor([1.0078125, -3.0], dtype=torch.bfloat16)) == 1  # bf16 step at 1 is 2^-7


def test_mismatched_or_unsupported_inputs_are_rejected():
    with pytest.raises(TypeError, match="one dtype"):
        ulp_diff(np.zeros(1, np.float16), np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="float"):
        ulp_diff(np.zeros(1, np.int16), np.zeros(1, np.int16))
    with pytest.raises(TypeError, match="NumPy array or a CPU torch tensor"):
        ulp_diff([1.0], [1.0])


def test_compare_to_reference_judges_and_describes():
    from pypto_pro.testing import compare_to_reference
    ref = np.array([1.0, 2.0, 0.5, 3.0], np.float16)
    near = ref.copy()
    near[1] = np.nextafter(near[1], np.float16(3))           # one fp16 ulp off
    ok, text = compare_to_reference(near, ref)
    assert ok and "1 float16 ulp, 1 of 4 elements differ" in text
    far = ref.copy()
    far[2] = np.float16(0.5 + 2 ** -7)                       # 8 ulps off
    assert compare_to_reference(far, ref)[0] is False
    bad = ref.copy()
    bad[0] = np.inf
    assert compare_to_reference(bad, bad)[0] is False         # not finite, although equal
    assert compare_to_reference(torch.tensor(ref), torch.tensor(ref)) == (True, compare_to_reference(ref, ref)[1])
