"""The GELU and layer norm variants of h200-002 that take any width hand a call whose rows are whole 16-byte
quads to a second entry of their cubin (the kernel h200-001 measured for that case); built here with NVRTC, each
cubin holds the entries its route can pick."""
import subprocess

import pytest
from conftest import ROOT

from fieldnote.measure.build import cuda
from fieldnote.measure.build.census import cuobjdump
from fieldnote.registry.ops import OPS


class Tensor:
    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


def routed(op, variant, shape, offset=0):
    contract = OPS[op].variant(variant).contract
    tensors = {name: Tensor((i + 1 << 20) + offset) for i, name in enumerate(["x", "weight", "bias", "out"])}
    return (contract.route(tensors, OPS[op].parse_label(shape)) or contract).entry


@pytest.mark.parametrize("shape, entry", [("4096x768", "gelu_bias_sigmoid_flat4_quads"),
                                          ("16384x4096", "gelu_bias_sigmoid_flat4_quads"),
                                          ("4099x770", "gelu_bias_sigmoid_flat4"),
                                          ("16411x3001", "gelu_bias_sigmoid_flat4")])
def test_the_flat_gelu_takes_its_quads_entry_where_cols_are_a_multiple_of_4(shape, entry):
    assert routed("gelu", "gelu_bias_sigmoid_flat4", shape) == entry


def test_the_flat_gelu_keeps_arrays_off_16_bytes_on_its_general_entry():
    assert routed("gelu", "gelu_bias_sigmoid_flat4", "4096x768", offset=4) == "gelu_bias_sigmoid_flat4"


@pytest.mark.parametrize("shape, entry", [("4096x768", "layernorm_warp_row_any_width_quads"),
                                          ("65536x4096", "layernorm_warp_row_any_width_quads"),
                                          ("4099x770", "layernorm_warp_row_any_width"),
                                          ("16411x3001", "layernorm_warp_row_any_width")])
def test_the_any_width_layernorm_takes_its_quads_entry_where_cols_are_a_multiple_of_4(shape, entry):
    assert routed("layernorm", "layernorm_warp_row_any_width", shape) == entry


@pytest.mark.parametrize("shape, entry, grid", [("4096x768", "layernorm_any_width_paired_quads", 512),
                                                ("4099x770", "layernorm_any_width_paired", 513),
                                                ("4096x2050", "layernorm_any_width_paired", 2048),
                                                ("16411x3001", "layernorm_any_width_paired", 8206),
                                                ("16411x4093", "layernorm_any_width_paired", 8206),
                                                ("16411x4095", "layernorm_any_width_paired", 16411)])
def test_the_paired_layernorm_takes_two_rows_a_block_from_1022_to_4093_columns(shape, entry, grid):
    """Its kernel's test of cols (layernorm_rows.cuh, any_width_rows with SHARE 2) and its grid's agree."""
    from fieldnote.registry.ops import OPS

    spec = OPS["layernorm"]
    assert routed("layernorm", "layernorm_any_width_paired", shape) == entry
    contract = spec.variant("layernorm_any_width_paired").contract
    if entry.endswith("_paired"):
        assert contract.grid(spec.parse_label(shape))[0] == grid


@pytest.mark.parametrize("shape, entry, grid", [("4096x768", "layernorm_any_width_three_pass_quads", 512),
                                                ("1024x4096", "layernorm_any_width_three_pass_quads", 1024),
                                                ("4099x770", "layernorm_any_width_three_pass", 513),
                                                ("7x1021", "layernorm_any_width_three_pass", 1),
                                                ("7x1022", "layernorm_any_width_three_pass_wide", 7),
                                                ("4096x2050", "layernorm_any_width_three_pass_wide", 4096),
                                                ("16411x3001", "layernorm_any_width_three_pass_wide", 16411),
                                                ("3x9999", "layernorm_any_width_three_pass_wide", 3)])
def test_the_three_pass_layernorm_takes_rows_past_1021_columns_off_the_quads_to_its_own_entry(shape, entry, grid):
    """Where any_width_rows would hold the row a block (past NARROW, 1021 columns, layernorm_rows.cuh), the route
    takes the three passes instead, a block a row at any width; narrower rows keep eight rows a block."""
    from fieldnote.registry.ops import OPS

    spec = OPS["layernorm"]
    assert routed("layernorm", "layernorm_any_width_three_pass", shape) == entry
    contract = spec.variant("layernorm_any_width_three_pass").contract
    chosen = contract.route({}, spec.parse_label(shape)) or contract
    assert chosen.grid(spec.parse_label(shape))[0] == grid


@pytest.mark.parametrize("shape, entry, grid", [("4096x768", "layernorm_any_width_fitted_warp6", 512),
                                                ("1024x128", "layernorm_any_width_fitted_warp1", 128),
                                                ("4099x770", "layernorm_any_width_fitted_warp7", 513),
                                                ("7x1021", "layernorm_any_width_fitted_warp8", 1),
                                                ("7x1024", "layernorm_any_width_fitted_warp8", 1),
                                                ("7x1022", "layernorm_any_width_fitted_block2", 7),
                                                ("4096x2050", "layernorm_any_width_fitted_block3", 4096),
                                                ("16411x3001", "layernorm_any_width_fitted_block3", 16411),
                                                ("1024x4096", "layernorm_any_width_fitted_block4", 1024),
                                                ("3x8189", "layernorm_any_width_fitted_block8", 3),
                                                ("3x8193", "layernorm_any_width_fitted", 3)])
def test_the_fitted_layernorm_holds_each_row_in_the_fewest_quads_a_lane_that_hold_it(shape, entry, grid):
    """A warp a row while eight quads a lane hold it (a row off the quads spanning (cols + 6) / 4 of them), then a
    block of 256 a row to eight quads a lane, then three passes: and every row fits the quads of its entry."""
    from fieldnote.registry.ops import OPS
    from fieldnote.registry.ops.layernorm import fitted_quads

    spec = OPS["layernorm"]
    s = spec.parse_label(shape)
    assert routed("layernorm", "layernorm_any_width_fitted", shape) == entry
    contract = spec.variant("layernorm_any_width_fitted").contract
    chosen = contract.route({}, s) or contract
    assert chosen.grid(s)[0] == grid
    lanes, quads = (32, int(entry[-1])) if "warp" in entry else (256, int(entry[-1]) if "block" in entry else 0)
    assert not quads or (quads - 1) * lanes < fitted_quads(s) <= quads * lanes


@pytest.mark.parametrize("op, variant, entries", [
    ("gelu", "gelu_bias_sigmoid_flat4", {"gelu_bias_sigmoid_flat4", "gelu_bias_sigmoid_flat4_quads"}),
    ("layernorm", "layernorm_any_width_fitted", {"layernorm_any_width_fitted",
                                                 *(f"layernorm_any_width_fitted_warp{q}" for q in range(1, 9)),
                                                 *(f"layernorm_any_width_fitted_block{q}" for q in range(2, 9))}),
    ("layernorm", "layernorm_warp_row_any_width",
     {"layernorm_warp_row_any_width", "layernorm_warp_row_any_width_quads"}),
    ("layernorm", "layernorm_any_width_paired", {"layernorm_any_width_paired", "layernorm_any_width_paired_quads"}),
    ("layernorm", "layernorm_any_width_three_pass", {"layernorm_any_width_three_pass",
                                                     "layernorm_any_width_three_pass_quads",
                                                     "layernorm_any_width_three_pass_wide"}),
])
def test_the_cubin_holds_every_entry_the_route_can_pick(tmp_path, op, variant, entries):
    cubin = tmp_path / f"{variant}.cubin"
    cubin.write_bytes(cuda.build(ROOT / "kernels" / "cuda" / op / f"{variant}.cu", variant, "sm_90")[0])
    listing = subprocess.run([cuobjdump(), "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    assert {line.split(":")[1].strip() for line in listing.splitlines() if "Function :" in line} == entries
