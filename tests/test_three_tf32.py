"""The arithmetic behind matmul_3xtf32_mma_64x64, modelled on the CPU: TF32 keeps 10 mantissa bits
(cvt.rna: round to nearest, ties away from zero), so one TF32 product misses the 1e-4 gate at the seed shape
and the 3xTF32 split (lo*hi + hi*lo + hi*hi) meets it with room to spare. The kernel itself is gated on the GPU."""
import numpy as np

from fieldnote.registry.ops import OPS


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


def rounded(x: np.ndarray) -> np.ndarray:
    """hi of matmul_3xtf32_mma_64x64_blocked: half a TF32 ulp added to the bits, then the low 13 bits cleared."""
    return tf32(x)


def toward_zero(x: np.ndarray) -> np.ndarray:
    """float64 to float32, rounded toward zero: how the tensor core adds into its FP32 accumulator."""
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f


def tensor_core_sum(terms, k: int, chain: int | None) -> np.ndarray:
    """The three products of each 8-deep k slice through m16n8k8 mma with round-toward-zero accumulation; with
    `chain`, every `chain` k the partial sums are added to an FP32 total (round to nearest) and restarted."""
    total = acc = np.zeros((terms[0][0].shape[0], terms[0][1].shape[1]), np.float32)
    for k0 in range(0, k, 8):
        for x, y in terms:
            acc = toward_zero(acc + x[:, k0:k0 + 8].astype(np.float64) @ y[k0:k0 + 8].astype(np.float64))
        if chain and (k0 + 8) % chain == 0:
            total, acc = total + acc, np.zeros_like(acc)
    return total + acc


def test_summing_each_k_step_apart_keeps_3xtf32_inside_the_gate_at_4096():
    """masksplit failed the gate at 4096^3 on the H200 (max abs error 7.3e-4): its sums run through 1536 mma.
    Even with every mma rounding toward zero, the blocked kernel's 12-mma chains stay well inside the gate."""
    k = 4096
    rng = np.random.default_rng(20260910)
    a, b = rng.standard_normal((32, k), dtype=np.float32), rng.standard_normal((k, 32), dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    a_hi, b_hi = rounded(a), rounded(b)
    terms = [(truncated(a - a_hi), b_hi), (a_hi, truncated(b - b_hi)), (a_hi, b_hi)]
    assert worst_ratio(tensor_core_sum(terms, k, chain=None), ref) > 1.0
    assert worst_ratio(tensor_core_sum(terms, k, chain=32), ref) < 0.5
