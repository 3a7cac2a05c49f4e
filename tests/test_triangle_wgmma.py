"""triangle_3xtf32_wgmma's steps as its launch contract drives them, modelled here block by block from the
kernels' index arithmetic (the GPU gate is the real check): packing a and b, the batched product over the
packed rows that the TMA maps address, and unpacking, give the contraction at shapes with and without padding."""
import numpy as np
import pytest

from fieldnote.registry.ops import OPS, triangle


def run_pack(grid, args):
    """triangle_3xtf32_wgmma_pack, every block's 32 x 32 tile: reads src[x][y][c], writes dst[c][row][q]."""
    src, dst, n, channels, rows, ld, swap = args
    for bx in range(grid[0]):
        for row in range(grid[1]):
            for bz in range(grid[2]):
                for t in range(32):
                    for lane in range(32):
                        q, c = bx * 32 + t, bz * 32 + lane  # the load of tile[t][lane]
                        v = 0.0
                        if row < n and q < n and c < channels:
                            x, y = (q, row) if swap else (row, q)
                            v = src[x, y, c]
                        if c < channels and q < ld:  # tile[t][lane], stored by the thread (lane, t)
                            dst.reshape(-1)[(c * rows + row) * ld + q] = v


def run_unpack(grid, args):
    src, out, n, channels = args
    for bx in range(grid[0]):
        for i in range(grid[1]):
            for bz in range(grid[2]):
                for t in range(32):
                    for lane in range(32):
                        c, j = bz * 32 + t, bx * 32 + lane
                        if c < channels and j < n:
                            out[i, j, c] = src.reshape(-1)[(c * n + i) * n + j]


def product(s, packed):
    """The batched entry as the TMA maps read: channel z's A from row z * n of a_packed, its B from row z * kb of
    b_packed, zeros past the maps' columns, K steps of 32 up to k = n; C's rows and columns past n not stored."""
    n, channels = s["n"], s["channels"]
    a, b = packed["a_packed"], packed["b_packed"]
    steps, kb = -(-n // 32), b.shape[0] // channels
    assert kb == 32 * steps
    out = np.zeros((channels * n, n))
    for z in range(channels):
        rows = np.zeros((n, 32 * steps))
        rows[:, :min(a.shape[1], 32 * steps)] = a[z * n:(z + 1) * n, :32 * steps]
        cols = b[z * kb:z * kb + 32 * steps, :n]
        out[z * n:(z + 1) * n] = rows @ cols
    return out


@pytest.mark.parametrize("n, channels", [(7, 5), (32, 32), (33, 3), (40, 33), (64, 2)])
def test_pack_multiply_unpack_is_the_contraction(n, channels):
    s = {"n": n, "channels": channels}
    rng = np.random.default_rng(n * 100 + channels)
    a, b = rng.standard_normal((n, n, channels)), rng.standard_normal((n, n, channels))
    contract = OPS["triangle"].variant("triangle_3xtf32_wgmma").contract
    tensors = {"a": a, "b": b, "out": np.full((n, n, channels), np.nan)}
    tensors.update({name: np.full(size, np.nan) for name, size in contract.workspace(s).items()})
    for step in contract.before:
        assert step.entry == "triangle_3xtf32_wgmma_pack"
        run_pack(step.grid(s), step.args(tensors, s))
    assert not np.isnan(tensors["b_packed"]).any(), "an element of B no block wrote (padding included)"
    assert not np.isnan(tensors["a_packed"][:channels * n]).any(), "an element of A no block wrote"
    tensors["batches"][:] = product(s, tensors)
    (unpack,) = contract.after
    run_unpack(unpack.grid(s), unpack.args(tensors, s))
    np.testing.assert_allclose(tensors["out"], np.einsum("ikc,jkc->ijc", a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n, channels, entry", [(128, 32, "small"), (256, 32, "small"), (512, 32, "large"),
                                                (300, 30, "large"), (64, 32, "small")])
def test_the_tiles_follow_the_wave(monkeypatch, n, channels, entry):
    from fieldnote.registry.ops import matmul

    monkeypatch.setattr(matmul, "multiprocessors", lambda: 132)
    s = {"n": n, "channels": channels}
    contract = OPS["triangle"].variant("triangle_3xtf32_wgmma").contract
    chosen = contract.route({}, s) or contract
    assert chosen.entry == f"triangle_3xtf32_wgmma_{entry}"
    bm = 128 if entry == "large" else 64
    assert chosen.grid(s) == (-(-n // 128), -(-n // bm), channels)
    assert chosen.workspace is triangle.packed
    assert [step.entry for step in chosen.before] == ["triangle_3xtf32_wgmma_pack"] * 2


@pytest.mark.parametrize("n, channels, entry", [(7, 5, "tile"), (64, 32, "tile"), (128, 24, "tile"),
                                                (129, 32, "small"), (200, 24, "small"), (512, 32, "large")])
def test_by_size_takes_the_tiles_where_they_led_and_the_batched_product_past_them(monkeypatch, n, channels, entry):
    from fieldnote.registry.ops import matmul

    monkeypatch.setattr(matmul, "multiprocessors", lambda: 132)
    s = {"n": n, "channels": channels}
    contract = OPS["triangle"].variant("triangle_by_size").contract
    chosen = contract.route({}, s) or contract
    assert chosen.entry == f"triangle_by_size_{entry}"
    tiled = OPS["triangle"].variant("triangle_smem_tile32x16").contract
    if entry == "tile":
        assert (chosen.grid(s), chosen.block, chosen.before, chosen.after) == (tiled.grid(s), tiled.block, (), ())
    else:
        assert [step.entry for step in (*chosen.before, *chosen.after)] == [
            "triangle_by_size_pack", "triangle_by_size_pack", "triangle_by_size_unpack"]
