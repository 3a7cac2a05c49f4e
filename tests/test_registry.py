"""The registries' worked example: a new op is its module, its torch kernel and a default shape (three files, no
schema edit, no other namespace edited), and a namespace may measure a subset of the ops."""
import re

import pytest
import yaml
from conftest import copy_project, snakemake

# The toy op: y = 2x over n floats. The files a new op takes, by path, and nothing else.
TOY = {
    "src/fieldnote/registry/ops/toy.py": '''"""A toy op for the registry's worked example: y = 2x over n floats."""
from .base import Op, normal


def make_inputs(rng, s):
    return {"x": normal(rng, s["n"])}


OP = Op(name="toy", title="Toy scale", order=9, dims=("n",), make_inputs=make_inputs,
        output_shape=lambda s: (s["n"],), torch_args=("x",), triton_args=("x",), small_shapes=({"n": 5},),
        work=lambda s: (8 * s["n"], s["n"]))
''',
    "kernels/torch/toy.py": '''"""The toy op, y = 2x, as a library user writes it."""


def toy(x):
    return 2 * x
''',
}


@pytest.fixture
def with_toy(tmp_path):
    project = copy_project(tmp_path)
    for name, text in TOY.items():
        (project / name).write_text(text)
    defaults = project / "config" / "config.yaml"
    defaults.write_text(defaults.read_text().replace("shapes:\n", "shapes:\n  toy: {n: 4096}\n", 1))
    (project / "config" / "namespaces" / "toy-run.yaml").write_text(
        yaml.safe_dump({"implementations": ["torch"], "variants": {}, "ops": ["toy"]}))
    return project


def test_a_new_op_is_its_module_its_kernel_and_a_default_shape(with_toy):
    """Three files (the op module, its torch kernel, config/config.yaml's default shape) and a namespace that
    measures it alone; the shipped namespaces still plan as before, and its CPU check runs the real gate."""
    plan = snakemake(with_toy, "-n", "--cores", "1", "results/toy-run")
    assert plan.returncode == 0, plan.stderr
    jobs = set(re.findall(r"wildcards: (.*)", plan.stdout))
    assert "ns=toy-run, op=toy, subject=torch" in jobs
    assert not [w for w in jobs if re.search(r"op=(matmul|gelu|layernorm|triangle|neighbor)\b", w)]
    check = snakemake(with_toy, "--cores", "1", "work/toy-run/check/cpu/toy/torch.parquet")
    assert check.returncode == 0, check.stderr
    assert snakemake(with_toy, "-n", "--cores", "1", "results/mage-006").returncode == 0


def test_the_schemas_take_the_new_op_from_the_registry(with_toy):
    path = with_toy / "config" / "namespaces" / "toy-run.yaml"
    path.write_text(yaml.safe_dump({"implementations": ["torch"], "variants": {}, "ops": ["toy"],
                                    "shapes": {"toy": {"n": 0}}}))
    plan = snakemake(with_toy, "-n", "--cores", "1", "results/toy-run")
    assert plan.returncode != 0 and "key 'shapes.toy.n': 0 is less than the minimum of 1" in plan.stderr
    path.write_text(yaml.safe_dump({"implementations": ["torch"], "variants": {}, "ops": ["toys"]}))
    plan = snakemake(with_toy, "-n", "--cores", "1", "results/toy-run")
    assert plan.returncode != 0 and "key 'ops.0': 'toys' is not one of ['matmul', 'gelu', 'layernorm', " \
        "'triangle', 'neighbor', 'toy']" in plan.stderr


def test_the_implementations_a_namespace_may_list_come_from_the_implementation_registry(tmp_path):
    from conftest import ROOT

    from fieldnote.core.errors import PipelineError
    from fieldnote.registry.config import load_defaults, resolve
    from fieldnote.registry.vocabulary import CHECKED_ON_CPU, MEASURED

    assert MEASURED == ("torch", "triton", "compiled", "cuda", "ptx") and CHECKED_ON_CPU == ("torch", "triton")
    path = tmp_path / "imported-only.yaml"
    path.write_text(yaml.safe_dump({"implementations": ["rust"], "variants": {}}))
    with pytest.raises(PipelineError, match=r"'rust' is not one of \['torch', 'triton', 'compiled', 'cuda', 'ptx'\]"):
        resolve("imported-only", path, load_defaults(ROOT / "config" / "config.yaml"))


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
