"""Which entry of the TMA matmul's cubin takes a call: decided on the host from the shape and the pointers."""
import pytest

from fieldnote.registry.ops import OPS, matmul


class Tensor:
    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


def entry(shape, address=1 << 20):
    contract = OPS["matmul"].variant("matmul_3xtf32_wgmma_tma").contract
    tensors = {"a": Tensor(address), "b": Tensor(1 << 21), "out": Tensor(1 << 22)}
    return (contract.route(tensors, shape) or contract).entry


@pytest.fixture(autouse=True)
def h200(monkeypatch):
    monkeypatch.setattr(matmul, "multiprocessors", lambda: 132)


@pytest.mark.parametrize("label, expected", [
    ("4096x4096x4096", "large"),   # 1024 tiles of 128x128
    ("2048x2048x2048", "large"),   # 256
    ("1536x1408x1024", "large"),   # 12 x 11 = 132: a full wave
    ("1024x1024x1024", "small"),   # 64 tiles: half the SMs idle, so 64x128
    ("1000x1000x1000", "small"),
    ("70x132x36", "small"),
    ("1023x1025x1027", "fallback"),  # n = 1025: rows of B are no 16-byte stride
    ("64x64x33", "fallback"),        # k = 33: rows of A
    ("17x19x23", "fallback"),
])
def test_the_shape_picks_the_entry(label, expected):
    assert entry(OPS["matmul"].parse_label(label)) == f"matmul_3xtf32_wgmma_tma_{expected}"


def test_an_operand_off_16_bytes_goes_to_the_fallback():
    assert entry({"m": 1024, "n": 1024, "k": 1024}, address=(1 << 20) + 4) == "matmul_3xtf32_wgmma_tma_fallback"


def padded_route(shape, address=1 << 20):
    contract = OPS["matmul"].variant("matmul_3xtf32_wgmma_tma_padded").contract
    tensors = {"a": Tensor(address), "b": Tensor(1 << 21), "out": Tensor(1 << 22)}
    return contract.route(tensors, shape) or contract


@pytest.mark.parametrize("label, tile, copies", [
    ("4096x4096x4096", "large", False),
    ("1024x1024x1024", "small", False),
    ("1023x1025x1027", "small", True),
    ("2047x2049x515", "large", True),   # 16 x 17 tiles of 128x128
    ("17x19x23", "small", True),
])
def test_padded_copies_rows_that_are_no_16_byte_stride_then_takes_the_same_tiles(label, tile, copies):
    shape = OPS["matmul"].parse_label(label)
    chosen = padded_route(shape)
    assert chosen.entry == f"matmul_3xtf32_wgmma_tma_padded_{tile}"
    assert [c.entry for c in chosen.before] == ["matmul_3xtf32_wgmma_tma_padded_copy"] * 2 * copies
    if copies:
        m, n, k = shape["m"], shape["n"], shape["k"]
        up = lambda x: -(-x // 4) * 4  # noqa: E731
        assert chosen.workspace(shape) == {"a16": (m, up(k)), "b16": (k, up(n))}
        a, b = chosen.before
        # a thread a float4 of the copy, 256 a block; the copy's row stride is a multiple of 4 floats
        assert a.grid(shape) == (-(-m * up(k) // 1024), 1, 1) and b.grid(shape) == (-(-k * up(n) // 1024), 1, 1)
        assert a.args({"a": "A", "a16": "A16"}, shape)[:2] == ("A", "A16")
        assert [int(v) for v in a.args({"a": 0, "a16": 0}, shape)[2:]] == [m, k, up(k)]


def test_padded_sends_k_0_to_the_mma_sync_kernel():
    assert padded_route({"m": 8, "n": 8, "k": 0}).entry == "matmul_3xtf32_wgmma_tma_fallback"


def split_route(shape):
    contract = OPS["matmul"].variant("matmul_3xtf32_wgmma_tma_splitk").contract
    tensors = {"a": Tensor(1 << 20), "b": Tensor(1 << 21), "out": Tensor(1 << 22)}
    return contract.route(tensors, shape) or contract


@pytest.mark.parametrize("label, splits, entry", [
    ("256x256x256", 4, "partials"),     # 8 tiles: 16 slices would leave SMs idle, but 8 K steps make 4 of 2
    ("512x512x512", 4, "partials"),     # 32 tiles, 4 slices of 4 steps: 128 blocks
    ("1024x1024x1024", 1, "small"),     # 128 tiles already
    ("4096x4096x4096", 1, "large"),
    ("70x132x36", 1, "small"),          # two K steps: one slice
    ("1023x1025x1027", 1, "fallback"),
])
def test_split_k_cuts_k_where_the_tiles_leave_sms_idle(label, splits, entry):
    shape = OPS["matmul"].parse_label(label)
    assert matmul.k_splits(shape) == splits
    chosen = split_route(shape)
    prefix = "matmul_3xtf32_wgmma_tma" if entry == "fallback" else "matmul_3xtf32_wgmma_tma_splitk"
    assert chosen.entry == f"{prefix}_{entry}"


@pytest.mark.parametrize("label", ["256x256x256", "512x512x512", "200x300x1000", "64x128x520"])
def test_split_k_slices_then_sums_to_the_product(label):
    """The partials as the batched entry's maps read them (slice z: A's columns from z ks, B's rows from z ks,
    zeros past k), summed in order as the reduce kernel does: the product."""
    import numpy as np

    from fieldnote.registry.ops import TensorMap

    shape = OPS["matmul"].parse_label(label)
    chosen = split_route(shape)
    assert chosen.entry == "matmul_3xtf32_wgmma_tma_splitk_partials"
    m, n, k = shape["m"], shape["n"], shape["k"]
    splits = chosen.grid(shape)[2]
    args = chosen.args({"a": 0, "b": 0, "partials": 0}, shape)
    rows, cols, ks, a_rows, a_cols, b_rows = (int(v) for v in args[3:])
    assert args[:2] == (TensorMap("a", (64, 32)), TensorMap("b", (32, 32))) and (rows, cols) == (m, n)
    assert a_rows == 0 and a_cols == b_rows == ks and splits * ks >= k > (splits - 1) * ks
    assert chosen.workspace(shape) == {"partials": (splits * m, n)}
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    wide_a, tall_b = np.zeros((m, splits * ks)), np.zeros((splits * ks, n))  # TMA's zeros past k
    wide_a[:, :k], tall_b[:k] = a, b
    total = np.zeros((m, n))
    for z in range(splits):
        total = total + wide_a[:, z * ks:(z + 1) * ks] @ tall_b[z * ks:(z + 1) * ks]
    np.testing.assert_allclose(total, a @ b, rtol=1e-12, atol=1e-10)
    (reduce,) = chosen.after
    assert reduce.grid(shape) == (-(-m * n // 1024), 1, 1)
    assert [int(v) for v in reduce.args({"partials": 0, "out": 0}, shape)[2:]] == [m * n // 4, splits]


@pytest.mark.parametrize("label, entry, copies", [
    ("256x256x256", "partials", False),   # split_k's slices where TMA reads the operands
    ("512x512x512", "partials", False),
    ("1024x1024x1024", "small", False),
    ("4096x4096x4096", "large", False),
    ("255x257x259", "small", True),       # padded's copies where it cannot
    ("2047x2049x515", "large", True),
    ("8x8x0", "fallback", False),
])
def test_padded_split_k_takes_the_route_that_led_at_each_kind_of_shape(label, entry, copies):
    contract = OPS["matmul"].variant("matmul_3xtf32_wgmma_tma_padded_splitk").contract
    tensors = {"a": Tensor(1 << 20), "b": Tensor(1 << 21), "out": Tensor(1 << 22)}
    chosen = contract.route(tensors, OPS["matmul"].parse_label(label)) or contract
    prefix = "matmul_3xtf32_wgmma_tma" if entry == "fallback" else "matmul_3xtf32_wgmma_tma_padded_splitk"
    assert chosen.entry == f"{prefix}_{entry}"
    assert [c.entry for c in chosen.before] == [f"{prefix}_copy"] * 2 * copies
    if entry == "partials":
        assert [c.entry for c in chosen.after] == [f"{prefix}_reduce"]
