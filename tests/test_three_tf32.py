"""The arithmetic behind matmul_3xtf32_mma_64x64, modelled on the CPU: TF32 keeps 10 mantissa bits
(cvt.rna: round to nearest, ties away from zero), so one TF32 product misses the 1e-4 gate at the seed shape
and the 3xTF32 split (lo*hi + hi*lo + hi*hi) meets it with room to spare. The kernel itself is gated on the GPU."""
import numpy as np

from fieldnote.ops import OPS


def tf32(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32)
    rounded = (bits + np.uint32(1 << 12)) & np.uint32(0xFFFFE000)  # add half an ulp of 10 bits, then truncate
    return rounded.view(np.float32)


def worst_ratio(out: np.ndarray, ref: np.ndarray, tol: float = 1e-4) -> float:
    return float((np.abs(out - ref) / (tol + tol * np.abs(ref))).max())


def test_three_tf32_products_meet_the_gate_where_one_does_not():
    shape = {"m": 256, "n": 256, "k": 1024}  # the seed's K, which sets the error; fewer rows keep it fast
    inputs = OPS["matmul"].inputs(shape, 20260910)
    a, b = inputs["a"], inputs["b"]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    a_hi, b_hi = tf32(a), tf32(b)
    a_lo, b_lo = tf32(a - a_hi), tf32(b - b_hi)
    one = (a_hi.astype(np.float64) @ b_hi.astype(np.float64)).astype(np.float32)
    three = (a_lo @ b_hi + a_hi @ b_lo) + a_hi @ b_hi  # float32 products and sums
    assert worst_ratio(one, ref) > 1.0
    assert worst_ratio(three, ref) < 0.1
    assert np.all(tf32(a_hi) == a_hi) and np.all(a_hi.view(np.uint32) & 0x1FFF == 0)


def truncated(x: np.ndarray) -> np.ndarray:
    """What the tensor core reads of an FP32 operand that is not TF32 already: its top 10 mantissa bits."""
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_the_mask_split_of_the_masksplit_kernel_also_meets_the_gate():
    """matmul_3xtf32_mma_64x64_masksplit: hi = x masked to TF32, lo = x - hi (exact), lo truncated by the MMA."""
    shape = {"m": 256, "n": 256, "k": 1024}
    inputs = OPS["matmul"].inputs(shape, 20260910)
    a, b = inputs["a"], inputs["b"]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    a_hi, b_hi = truncated(a), truncated(b)
    assert np.all(a_hi + (a - a_hi) == a)  # the split loses nothing before the MMA reads lo
    a_lo, b_lo = truncated(a - a_hi), truncated(b - b_hi)
    three = (a_lo @ b_hi + a_hi @ b_lo) + a_hi @ b_hi
    assert worst_ratio(three, ref) < 0.1
