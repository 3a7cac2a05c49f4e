"""The trimul variants' launch contracts on the CPU: every operand a TMA descriptor maps is at least one box in both
dimensions with rows of 16-byte strides, at every shape the contract takes; the shapes it cannot take are refused
with their reason, before any launch."""
import itertools

import numpy as np
import pytest

from fieldnote.registry.ops import OPS, TensorMap
from fieldnote.registry.ops.trimul import scratch

VARIANT = OPS["trimul"].variant("trimul_3xtf32_wgmma")
VARIANTS = list(OPS["trimul"].kernel_variants.values())


def steps(variant=VARIANT):
    contract = variant.contract
    return (*contract.before, contract, *contract.after)


def shapes():
    yield OPS["trimul"].medium_shape
    yield from OPS["trimul"].small_shapes
    yield from (case.shape for case in OPS["trimul"].edge_cases)
    for batch, n, channels, hidden in itertools.product((1, 2, 3), (5, 33, 130, 300), (4, 12, 128, 196),
                                                        (4, 32, 132, 256)):
        yield {"batch": batch, "n": n, "channels": channels, "hidden": hidden}


def tensors_of(shape):
    """What a step's arguments read: the scratch tensors by their shapes, the op's inputs as names only."""
    tensors = {name: np.empty(size, np.float32) for name, size in scratch(shape).items()}
    return {**tensors, **{name: None for name in OPS["trimul"].torch_args}, "out": None}


def maps(shape, variant):
    tensors = tensors_of(shape)
    for step in steps(variant):
        yield from ((step.entry, a, tensors[a.tensor]) for a in step.args(tensors, shape) if isinstance(a, TensorMap))


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
@pytest.mark.parametrize("shape", list(shapes()), ids=lambda s: "x".join(map(str, s.values())))
def test_every_mapped_operand_is_a_whole_box_of_16_byte_rows(shape, variant):
    assert variant.contract.supports(shape) is None
    seen = set()
    for entry, tensor_map, tensor in maps(shape, variant):
        rows, cols = tensor.shape
        assert rows >= tensor_map.box[0] and cols >= tensor_map.box[1], (entry, tensor_map, tensor.shape)
        assert cols % 4 == 0, (entry, tensor_map.tensor, tensor.shape)
        seen.add(tensor_map.tensor)
    assert seen == {"zz", "w_in", "a_packed", "b_packed", "gt", "tn", "pt"}


@pytest.mark.parametrize("shape, reason", [
    ({"batch": 1, "n": 16, "channels": 30, "hidden": 32}, "multiples of 4"),
    ({"batch": 1, "n": 16, "channels": 32, "hidden": 6}, "multiples of 4"),
    ({"batch": 1, "n": 16, "channels": 516, "hidden": 32}, "channels at most 512"),
    ({"batch": 1, "n": 16, "channels": 32, "hidden": 260}, "hidden at most 256"),
    ({"batch": 1025, "n": 1024, "channels": 128, "hidden": 128}, "32-bit indices"),
    ({"batch": 600, "n": 16, "channels": 32, "hidden": 128}, "trimul_product's grid would be 76800 blocks along z"),
    ({"batch": 70000, "n": 1, "channels": 32, "hidden": 4}, "280000 blocks along z, outside CUDA's 1 to 65535"),
    ({"batch": 1, "n": 16, "channels": 32, "hidden": 0}, "trimul_project_in's grid would be 0 blocks along x"),
])
def test_a_shape_the_kernel_cannot_take_is_refused_with_its_reason(shape, reason):
    assert reason in VARIANT.contract.refusal(shape)


WALKERS = ("trimul_project_in", "trimul_gate_out", "trimul_project_out", "trimul_out")


@pytest.mark.parametrize("shape", [{"batch": 1, "n": 5, "channels": 12, "hidden": 32},
                                   {"batch": 2, "n": 256, "channels": 128, "hidden": 128},
                                   {"batch": 1, "n": 768, "channels": 384, "hidden": 128}],
                         ids=lambda s: "x".join(map(str, s.values())))
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_a_product_that_walks_its_tiles_has_a_tile_for_every_block_and_tiles_over_its_whole_output(shape, variant):
    """The projections' blocks walk their tiles (wgmma_tma::run's `tiles`, run_two's): no block without one, and the
    tiles `tiles_x` wide cover every pair's row and every column of the product."""
    tensors = tensors_of(shape)
    columns = {"trimul_project_in": 2 * shape["hidden"], "trimul_gate_out": shape["channels"],
               "trimul_project_out": shape["channels"], "trimul_out": shape["channels"]}
    pairs = shape["batch"] * shape["n"] ** 2
    walking = [step for step in steps(variant) if step.entry in WALKERS]
    count, cols = {"trimul_3xtf32_wgmma": (3, 128), "trimul_3xtf32_wgmma_fused_out": (2, 128),
                   "trimul_3xtf32_wgmma_pingpong": (3, 64)}[variant.name]
    assert len(walking) == count
    for step in walking:
        tiles_x, tiles = map(int, step.args(tensors, shape)[-2:])
        blocks = step.grid(shape)
        assert 1 <= blocks[0] <= tiles and blocks[1] == 1, (step.entry, blocks, tiles)
        assert (tiles_x - 1) * cols < columns[step.entry] <= tiles_x * cols, (step.entry, tiles_x)
        assert tiles // tiles_x * 128 >= pairs and tiles % tiles_x == 0


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_step_asks_for_no_more_shared_memory_than_an_sm_90_block_may_have(variant):
    """The walking products' rings (four stages of 48 KB; the ping-pong schedule's five of 40 KB and its two turns'
    barriers) inside the 227 KB a block may opt into on the H100 and the H200."""
    assert all(step.dynamic_shared_bytes <= 227 * 1024 for step in steps(variant))
