"""The registries' worked examples: a new op is its own five files (its module, its torch reference, its CUDA
kernel, a default shape and a namespace that measures it; no schema, test or other namespace edited), and a new
toolchain is an entry, a build module and a rule; a namespace measures the ops it lists."""
import re

import pytest
import yaml
from conftest import copy_project, snakemake

from fieldnote.registry.ops import OPS

# The registry's worked example (docs/reference.md, "Adding an op"): a SiLU, y = x sigmoid(x), with a torch
# reference and a CUDA kernel and no Triton kernel. Its five files, by path, and nothing else: no other namespace and
# no test is edited for it.
SILU = {
    "src/fieldnote/registry/ops/silu.py": '''"""SiLU: y = x sigmoid(x) over a rows x cols tensor."""
import numpy as np

from .base import KernelVariant, LaunchContract, Op, cdiv, normal

ONE_A_THREAD = LaunchContract(entry="silu_thread", block=(256, 1, 1),
                              grid=lambda s: (cdiv(s["rows"] * s["cols"], 256), 1, 1),
                              args=lambda t, s: (t["x"], t["out"], np.int32(s["rows"] * s["cols"])))

OP = Op(name="silu", title="SiLU", order=6, dims=("rows", "cols"),
        make_inputs=lambda rng, s: {"x": normal(rng, s["rows"], s["cols"])},
        output_shape=lambda s: (s["rows"], s["cols"]), torch_args=("x",),
        small_shapes=({"rows": 3, "cols": 257},), medium_shape={"rows": 33, "cols": 768},
        kernel_variants={"silu_thread": KernelVariant("silu_thread", "silu", ONE_A_THREAD, "one thread an element")},
        work=lambda s: (8 * s["rows"] * s["cols"], 4 * s["rows"] * s["cols"]))
''',
    "kernels/torch/silu.py": '''"""SiLU as a library user writes it."""
import torch.nn.functional as F


def silu(x):
    return F.silu(x)
''',
    "kernels/cuda/silu/silu_thread.cu": '''// silu_thread: y = x / (1 + exp(-x)) over n floats, one thread an element.
extern "C" __global__ void __launch_bounds__(256) silu_thread(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.f + expf(-x[i]));
}
''',
    "config/namespaces/silu-run.yaml": "ops: [silu]\nimplementations: [torch, triton, compiled, cuda]\n"
                                       "variants: {silu: silu_thread}\n",
}
DEFAULT_SHAPE = "  silu: {rows: 4096, cols: 768}\n"  # the fifth file: config/config.yaml's shapes


@pytest.fixture
def with_silu(tmp_path):
    project = copy_project(tmp_path)
    for name, text in SILU.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    defaults = project / "config" / "config.yaml"
    defaults.write_text(defaults.read_text().replace("shapes:\n", "shapes:\n" + DEFAULT_SHAPE, 1))
    return project


def planned(project, target: str) -> set[tuple[str, str]]:
    plan = snakemake(project, "-n", "--cores", "1", target)
    assert plan.returncode == 0, plan.stderr
    return set(re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", plan.stdout, re.MULTILINE))


def test_a_new_op_is_its_five_files(with_silu):
    """The namespace lists Triton, which the SiLU has no kernel of: it is measured as the implementations it has.
    Its CUDA kernel builds through NVRTC and its torch reference passes the real CPU gate; a shipped namespace
    plans as before, the SiLU in none of its jobs."""
    jobs = planned(with_silu, "results/silu-run")
    assert ("check_cpu", "ns=silu-run, op=silu, subject=torch") in jobs
    assert ("build_cuda", "arch=sm_90, op=silu, variant=silu_thread") in jobs
    assert {w for r, w in jobs if r == "check_gpu"} == {f"ns=silu-run, op=silu, subject={i}"
                                                          for i in ("torch", "compiled", "cuda")}
    assert not [w for _, w in jobs if "triton" in w or re.search(r"op=(?!silu\b)", w)]
    built = snakemake(with_silu, "--cores", "1", "work/build/sm_90/cuda/silu/silu_thread.cubin",
                      "work/silu-run/check/cpu/silu/torch.parquet")
    assert built.returncode == 0, built.stderr
    assert (with_silu / "work/build/sm_90/cuda/silu/silu_thread.cubin").read_bytes()[:4] == b"\x7fELF"
    assert not [w for _, w in planned(with_silu, "results/mage-006") if "silu" in w]


def test_the_schemas_take_the_new_op_from_the_registry(with_silu):
    path = with_silu / "config" / "namespaces" / "silu-run.yaml"
    path.write_text(yaml.safe_dump({"implementations": ["torch"], "variants": {}, "ops": ["silu"],
                                    "shapes": {"silu": {"rows": 0, "cols": 4}}}))
    plan = snakemake(with_silu, "-n", "--cores", "1", "results/silu-run")
    assert plan.returncode != 0 and "key 'shapes.silu.rows': 0 is less than the minimum of 1" in plan.stderr
    path.write_text(yaml.safe_dump({"implementations": ["torch"], "variants": {}, "ops": ["silus"]}))
    plan = snakemake(with_silu, "-n", "--cores", "1", "results/silu-run")
    listed = re.search(r"key 'ops.0': 'silus' is not one of \[(.*?)\]", plan.stderr)
    assert plan.returncode != 0 and listed, plan.stderr
    assert sorted(listed.group(1).split(", ")) == sorted(f"'{op}'" for op in [*OPS, "silu"])
    path.write_text(yaml.safe_dump({"implementations": ["torch"], "variants": {}}))
    plan = snakemake(with_silu, "-n", "--cores", "1", "results/silu-run")
    assert plan.returncode != 0 and "silu-run.yaml: key 'ops' is missing" in plan.stderr


def test_the_implementations_a_namespace_may_list_come_from_the_implementation_registry(tmp_path):
    from conftest import ROOT

    from fieldnote.core.errors import PipelineError
    from fieldnote.registry.config import load_defaults, resolve
    from fieldnote.registry.vocabulary import CHECKED_ON_CPU, MEASURED

    assert MEASURED == ("torch", "triton", "compiled", "library", "cuda", "ptx")
    assert CHECKED_ON_CPU == ("torch", "triton")
    path = tmp_path / "imported-only.yaml"
    path.write_text(yaml.safe_dump({"ops": ["gelu"], "implementations": ["rust"], "variants": {}}))
    listed = r"\['torch', 'triton', 'compiled', 'library', 'cuda', 'ptx'\]"
    with pytest.raises(PipelineError, match=r"'rust' is not one of " + listed):
        resolve("imported-only", path, load_defaults(ROOT / "config" / "config.yaml"))


def test_design_strings_carry_no_typed_number():
    """A note prints each variant's design in its attempts and stages tables: prose, its geometry in words, with no
    number typed by hand (a build's registers, shared bytes or blocks an SM are the resources table's)."""
    from fieldnote.publish.authored import typed_numerals
    from fieldnote.registry.ops import OPS

    typed = {v.name: typed_numerals(v.design) for op in OPS.values() for v in op.kernel_variants.values()}
    offenders = {name: found for name, found in typed.items() if found != []}
    assert offenders == {}, f"design strings with typed numbers (variant: numerals): {offenders}"


# The second toolchain's worked example: hand-written PTX through nvJitLink. Its files, and nothing else:
#   src/fieldnote/registry/toolchains.py            the toolchain (where its sources live, which module builds them)
#   src/fieldnote/registry/vocabulary.py            the implementation `ptx` (title, colour, hand-written)
#   src/fieldnote/measure/build/ptx.py             the build: cubin and ptxas's report
#   workflow/rules/build.smk               its build rule (`use rule build_cuda as build_ptx`)
#   kernels/ptx/gelu/gelu_bias_sigmoid_ptx.ptx, src/fieldnote/registry/ops/gelu.py   a variant, and its registration
SIDE_BY_SIDE = {"implementations": ["torch", "cuda", "ptx"], "ops": ["gelu"],
                "variants": {"gelu": {"cuda": "gelu_bias_sigmoid_vec4", "ptx": "gelu_bias_sigmoid_ptx"}}}


@pytest.fixture
def two_toolchains(tmp_path):
    project = copy_project(tmp_path)
    (project / "config" / "namespaces" / "two-toolchains.yaml").write_text(yaml.safe_dump(SIDE_BY_SIDE))
    return project


def test_a_namespace_measures_two_hand_written_toolchains_side_by_side(two_toolchains):
    plan = snakemake(two_toolchains, "-n", "--cores", "1", "results/two-toolchains")
    assert plan.returncode == 0, plan.stderr
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)$", plan.stdout, re.MULTILINE)
    assert ("build_cuda", "arch=sm_90, op=gelu, variant=gelu_bias_sigmoid_vec4") in jobs
    assert ("build_ptx", "arch=sm_90, op=gelu, variant=gelu_bias_sigmoid_ptx") in jobs
    assert {w for r, w in jobs if r == "check_gpu"} == {f"ns=two-toolchains, op=gelu, subject={i}"
                                                          for i in ("torch", "cuda", "ptx")}
    assert {w for r, w in jobs if r == "sanitize"} == {f"ns=two-toolchains, op=gelu, variant={v}"
                                                         for v in ("gelu_bias_sigmoid_vec4", "gelu_bias_sigmoid_ptx")}
    built = snakemake(two_toolchains, "--cores", "2", "work/two-toolchains/resources.parquet")
    assert built.returncode == 0, built.stderr
    import pandas as pd

    resources = pd.read_parquet(two_toolchains / "work" / "two-toolchains" / "resources.parquet").set_index("variant")
    assert resources.loc["gelu_bias_sigmoid_ptx", "toolchain"] == "ptx"
    assert resources.loc["gelu_bias_sigmoid_ptx", "compiler"].startswith("nvJitLink ")
    assert resources.loc["gelu_bias_sigmoid_vec4", "compiler"].startswith("NVRTC ")
    assert (resources["registers"] > 0).all() and (resources["registers"] == resources["cuobjdump_registers"]).all()


def test_a_variant_named_for_the_wrong_toolchain_is_refused_with_its_key(two_toolchains):
    path = two_toolchains / "config" / "namespaces" / "two-toolchains.yaml"
    wrong = {**SIDE_BY_SIDE, "variants": {"gelu": {"cuda": "gelu_bias_sigmoid_vec4", "ptx": "gelu_bias_tanh"}}}
    path.write_text(yaml.safe_dump(wrong))
    plan = snakemake(two_toolchains, "-n", "--cores", "1", "results/two-toolchains")
    assert plan.returncode != 0 and "Traceback" not in plan.stderr
    assert "key 'variants.gelu.ptx': 'gelu_bias_tanh' is built by toolchain cuda, not ptx" in plan.stderr
    path.write_text(yaml.safe_dump({**SIDE_BY_SIDE, "variants": {"gelu": "gelu_bias_sigmoid_vec4"}}))
    plan = snakemake(two_toolchains, "-n", "--cores", "1", "results/two-toolchains")
    assert "key 'variants.gelu' is not a variant of ptx (implementation ptx needs a variant)" in plan.stderr
