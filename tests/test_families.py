"""Kernel families: the h200-001 variants share their pieces through headers (kernels/cuda/include), which NVRTC
finds on its include path and the build takes as inputs. Rewritten onto the headers, they compile to the very
instructions h200-001 measured, except the two whose rewrite changed them (gated on the GPU instead)."""
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT, copy_project, snakemake

from fieldnote.core.errors import PipelineError
from fieldnote.measure.build import cuda
from fieldnote.measure.build.census import cuobjdump

ARCHIVE = ROOT / "archives" / "h200-001.tar.gz"
UNCHANGED = ["matmul/matmul_3xtf32_mma_64x64", "matmul/matmul_3xtf32_mma_64x64_masksplit",
             "matmul/matmul_3xtf32_mma_64x64_blocked", "matmul/matmul_3xtf32_mma_64x64_8warps",
             "matmul/matmul_3xtf32_mma_64x64_presplit", "matmul/matmul_3xtf32_mma_64x64_presplit_8warps",
             "matmul/matmul_3xtf32_wgmma_64x64", "layernorm/layernorm_warp_row_registers",
             "layernorm/layernorm_warp_two_rows", "layernorm/layernorm_warp_row_smem_affine",
             "triangle/triangle_3xtf32_mma", "triangle/triangle_smem_tile32x16", "gelu/gelu_bias_sigmoid_vec4"]
CHANGED = ["layernorm/layernorm_warp_row_six_quads", "layernorm/layernorm_warp_row_pipelined"]


def sass(source: Path, entry: str, tmp: Path, function: str | None = None) -> list[str]:
    """The instructions of the entry's cubin (of one of its functions, if named), without addresses and
    encodings."""
    arch = "sm_90a" if "wgmma" in entry else "sm_90"
    cubin = tmp / f"{entry}.cubin"
    cubin.write_bytes(cuda.build(source, entry, arch)[0])
    only = ["-fun", function] if function else []
    text = subprocess.run([cuobjdump(), "-sass", *only, str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    return [line.split("*/")[1].split(";")[0].strip() for line in text.splitlines()
            if line.strip().startswith("/*") and "*/" in line and ";" in line]


def archived(variant: str, tmp: Path) -> Path:
    with tarfile.open(ARCHIVE) as tar:
        data = tar.extractfile(f"h200-001/source/kernels/cuda/{variant}.cu").read()
    path = tmp / "archived" / f"{variant}.cu"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("variant", UNCHANGED)
def test_a_family_variant_compiles_to_the_instructions_h200_001_measured(variant, tmp_path):
    entry = variant.split("/")[1]
    source = ROOT / "kernels" / "cuda" / f"{variant}.cu"
    assert cuda.headers(source), f"{variant} includes no family header"
    assert sass(source, entry, tmp_path) == sass(archived(variant, tmp_path), entry, tmp_path)


@pytest.mark.parametrize("variant", CHANGED)
def test_a_rewritten_variant_still_builds_onto_its_family(variant, tmp_path):
    entry = variant.split("/")[1]
    source = ROOT / "kernels" / "cuda" / f"{variant}.cu"
    assert cuda.headers(source) == [cuda.INCLUDE / "layernorm_rows.cuh"]
    report = cuda.build(source, entry, "sm_90")[2]
    assert report["spill_stores_bytes"] == 0 and report["headers"].startswith("layernorm_rows.cuh:")


def test_headers_are_found_through_headers_and_a_missing_one_is_named(tmp_path):
    source = ROOT / "kernels" / "cuda" / "triangle" / "triangle_3xtf32_mma.cu"
    assert [h.name for h in cuda.headers(source)] == ["tf32x3_mma.cuh", "triangle_runs.cuh"]
    broken = tmp_path / "broken.cu"
    broken.write_text('#include "no_such_family.cuh"\n')
    with pytest.raises(PipelineError, match=r'broken.cu: includes "no_such_family.cuh", which is not in'):
        cuda.headers(broken)


@pytest.mark.slow
def test_editing_a_family_header_rebuilds_its_variants_and_no_other(tmp_path):
    project = copy_project(tmp_path)
    blocked = "work/build/sm_90/cuda/matmul/matmul_3xtf32_mma_64x64_blocked.cubin"
    tile = "work/build/sm_90/cuda/triangle/triangle_smem_tile32x16.cubin"
    built = snakemake(project, "--cores", "2", blocked, tile)
    assert built.returncode == 0, built.stderr
    (project / "kernels" / "cuda" / "include" / "tf32x3_mma.cuh").write_text(
        (project / "kernels" / "cuda" / "include" / "tf32x3_mma.cuh").read_text() + "\n// edited\n")
    plan = snakemake(project, "-n", "--cores", "1", blocked, tile)
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.count("rule build_cuda:") == 1 and "variant=matmul_3xtf32_mma_64x64_blocked" in plan.stdout
    assert "tf32x3_mma.cuh" in plan.stdout  # the reason: an updated input


def test_the_any_width_layernorm_runs_the_h200_001_kernel_where_cols_are_quads(tmp_path):
    """Its second entry, which the launcher takes where cols % 4 == 0, is layernorm_warp_row_registers' code."""
    folder = ROOT / "kernels" / "cuda" / "layernorm"
    quads = sass(folder / "layernorm_warp_row_any_width.cu", "layernorm_warp_row_any_width", tmp_path,
                 function="layernorm_warp_row_any_width_quads")
    assert quads and quads == sass(folder / "layernorm_warp_row_registers.cu", "layernorm_warp_row_registers", tmp_path)
