"""The registries' worked example: a new op is its module, its torch kernel and a default shape (three files, no
schema edit, no other namespace edited), and a namespace may measure a subset of the ops."""
import re

import pytest
import yaml
from conftest import copy_project, snakemake

# The toy op: y = 2x over n floats. The files a new op takes, by path, and nothing else.
TOY = {
    "src/fieldnote/ops/toy.py": '''"""A toy op for the registry's worked example: y = 2x over n floats."""
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
    assert "ns=toy-run, op=toy, impl=torch" in jobs
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

    from fieldnote.config import load_defaults, resolve
    from fieldnote.errors import PipelineError
    from fieldnote.vocabulary import CHECKED_ON_CPU, MEASURED

    assert MEASURED == ("torch", "triton", "compiled", "cuda") and CHECKED_ON_CPU == ("torch", "triton")
    path = tmp_path / "imported-only.yaml"
    path.write_text(yaml.safe_dump({"implementations": ["rust"], "variants": {}}))
    with pytest.raises(PipelineError, match=r"'rust' is not one of \['torch', 'triton', 'compiled', 'cuda'\]"):
        resolve("imported-only", path, load_defaults(ROOT / "config" / "config.yaml"))
