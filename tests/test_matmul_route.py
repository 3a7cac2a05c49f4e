"""Which entry of the TMA matmul's cubin takes a call: decided on the host from the shape and the pointers."""
import pytest

from fieldnote.ops import OPS, matmul


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
