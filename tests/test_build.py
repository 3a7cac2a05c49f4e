"""Real NVRTC builds of every hand-written variant and real offline Triton compiles, for sm_90, on the CPU."""
from pathlib import Path

import pytest
from conftest import ROOT

from fieldnote.core.errors import PipelineError
from fieldnote.measure import kernels
from fieldnote.measure.build import builder, census, cuda, triton
from fieldnote.registry.ops import OPS
from fieldnote.registry.toolchains import TOOLCHAINS

VARIANTS = [(op, v) for op in OPS for v in OPS[op].kernel_variants.values()]
BROKEN = ROOT / "tests" / "cuda" / "matmul_cpasync_2buf_64x64_broken.cu"


@pytest.mark.parametrize("op,variant", VARIANTS, ids=[v.name for _, v in VARIANTS])
def test_every_hand_written_variant_builds_with_its_toolchain_without_spills(op, variant):
    build = builder(TOOLCHAINS[variant.toolchain]).build
    cubin, ptx, report = build(ROOT / variant.source, variant.contract.entry, variant.target("sm_90"))
    assert cubin[:4] == b"\x7fELF" and f".entry {variant.contract.entry}" in ptx
    assert report["registers"] > 0 and report["spill_stores_bytes"] == 0 and report["spill_loads_bytes"] == 0
    assert report["cuobjdump_registers"] == report["registers"]


def test_an_arch_specific_variant_is_built_for_its_target():
    """wgmma exists on sm_90a only: the variant that uses it is built for sm_90a, the others for the arch given."""
    variant = OPS["matmul"].variant("matmul_3xtf32_wgmma_64x64")
    assert variant.target("sm_90") == variant.target("sm_90a") == "sm_90a"
    assert OPS["matmul"].variant("matmul_3xtf32_mma_64x64_blocked").target("sm_90") == "sm_90"
    _, ptx, report = cuda.build(ROOT / variant.source, variant.contract.entry, variant.target("sm_90"))
    assert report["arch"] == "sm_90a" and ".target sm_90a" in ptx and "wgmma.mma_async" in ptx
    with pytest.raises(PipelineError, match="compile for sm_90 failed"):
        cuda.build(ROOT / variant.source, variant.contract.entry, "sm_90")


def test_matmul_pipeline_requests_two_buffers_of_shared_memory():
    variant = OPS["matmul"].variant("matmul_cpasync_2buf_64x64")
    _, ptx, report = cuda.build(ROOT / variant.source, variant.contract.entry, "sm_90")
    assert report["static_shared_bytes"] == 2 * (32 * 68 + 32 * 64) * 4 == 33792
    assert report["barriers"] == 1 and report["ptx_async_copies_128bit"] > 0 and report["ptx_async_copies_32bit"] > 0


def test_layernorm_row_kernel_shares_eight_floats():
    variant = OPS["layernorm"].variant("layernorm_block_row_1pass")
    _, _, report = cuda.build(ROOT / variant.source, variant.contract.entry, "sm_90")
    assert report["static_shared_bytes"] == 32 and report["ptx_global_loads_128bit"] > 0


def test_broken_matmul_variant_still_builds():
    cubin, _, report = cuda.build(BROKEN, "matmul_cpasync_2buf_64x64_broken", "sm_90")
    assert cubin and report["spill_stores_bytes"] == 0


def test_compile_error_names_the_file(tmp_path: Path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* x) { x[0] = y; }')
    with pytest.raises(Exception, match="bad.cu: compile for sm_90 failed"):
        cuda.build(bad, "k", "sm_90")


def test_ptxas_report_is_parsed_per_entry():
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Function properties for k\n"
           "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 40 registers, used 1 barriers, 32 bytes smem, 400 bytes cmem[0]\n")
    assert cuda.parse_ptxas(log, "k") == {"registers": 40, "spill_stores_bytes": 4, "spill_loads_bytes": 12,
                                          "stack_bytes": 8, "static_shared_bytes": 32, "barriers": 1}


def test_an_entry_whose_name_begins_another_gets_its_own_report():
    def report(name, registers):
        return (f"ptxas info    : Function properties for {name}\n"
                f"ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                f"ptxas info    : Used {registers} registers, used 0 barriers\n")

    log = report("k_quads", 18) + report("k", 28)
    assert cuda.parse_ptxas(log, "k")["registers"] == 28 and cuda.parse_ptxas(log, "k_quads")["registers"] == 18


def test_ptx_census_counts_by_width():
    ptx = """
    @%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];
    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2];
    ld.global.nc.v2.u32 {%r2, %r3}, [%rd3];
    st.global.v4.b32 [ %rd4 + 0 ], { %r4, %r5, %r6, %r7 };
    cp.async.ca.shared.global [ %r8 + 0 ], [ %rd5 + 0 ], 0x4, %r9;
    cp.async.cg.shared.global [%r10], [%rd6], 16;
    bar.sync 0;
    barrier.sync 0;
    """
    row = census.ptx_census(ptx)
    assert (row["global_loads"], row["global_loads_32bit"], row["global_loads_64bit"], row["global_loads_128bit"]) \
        == (3, 1, 1, 1)
    assert (row["global_stores"], row["global_stores_128bit"], row["barriers"]) == (1, 1, 2)
    assert (row["async_copies"], row["async_copies_32bit"], row["async_copies_128bit"]) == (2, 1, 1)


def test_triton_layernorm_census_is_scalar_single_pass():
    """The field note's census: Triton's layernorm loads x, scale and bias with scalar 32-bit loads."""
    _, _, row = triton.census(kernels.load("triton", "layernorm"), "sm_90")
    assert row["kernel"] == "layernorm_row_kernel" and row["num_warps"] == 4
    assert row["global_loads"] == row["global_loads_32bit"] > 0 and row["global_loads_128bit"] == 0
    assert row["global_stores"] == row["global_stores_32bit"] > 0
    assert row["registers"] > 0 and row["barriers"] >= 1


@pytest.mark.parametrize("op", [op for op in OPS if "triton" in OPS[op].implementations])
def test_every_triton_kernel_compiles_offline(op):
    cubin, ptx, row = triton.census(kernels.load("triton", op), "sm_90")
    assert cubin[:4] == b"\x7fELF" and ".target sm_90" in ptx and row["registers"] > 0
