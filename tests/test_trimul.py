"""trimul_3xtf32_wgmma's launch contract on the CPU: every operand a TMA descriptor maps is at least one box in both
dimensions with rows of 16-byte strides, at every shape the contract takes; the shapes it cannot take are refused
with their reason, before any launch."""
import itertools

import numpy as np
import pytest

from fieldnote.registry.ops import OPS, TensorMap
from fieldnote.registry.ops.trimul import WGMMA_PIPELINE, scratch

VARIANT = OPS["trimul"].variant("trimul_3xtf32_wgmma")
STEPS = (*WGMMA_PIPELINE.before, WGMMA_PIPELINE, *WGMMA_PIPELINE.after)


def shapes():
    yield OPS["trimul"].medium_shape
    yield from OPS["trimul"].small_shapes
    yield from (case.shape for case in OPS["trimul"].edge_cases)
    for batch, n, channels, hidden in itertools.product((1, 2, 3), (5, 33, 130, 300), (4, 12, 128, 196),
                                                        (4, 32, 132, 256)):
        yield {"batch": batch, "n": n, "channels": channels, "hidden": hidden}


def maps(shape):
    tensors = {name: np.empty(size, np.float32) for name, size in scratch(shape).items()}
    tensors.update({name: None for name in OPS["trimul"].torch_args}, out=None)
    for step in STEPS:
        yield from ((step.entry, a, tensors[a.tensor]) for a in step.args(tensors, shape) if isinstance(a, TensorMap))


@pytest.mark.parametrize("shape", list(shapes()), ids=lambda s: "x".join(map(str, s.values())))
def test_every_mapped_operand_is_a_whole_box_of_16_byte_rows(shape):
    assert VARIANT.contract.supports(shape) is None
    seen = set()
    for entry, tensor_map, tensor in maps(shape):
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
    ({"batch": 9, "n": 1024, "channels": 128, "hidden": 128}, "65535 x 128 pairs"),
])
def test_a_shape_the_kernel_cannot_take_is_refused_with_its_reason(shape, reason):
    assert reason in VARIANT.contract.supports(shape)
