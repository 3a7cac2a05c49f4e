"""The correctness gate on the CPU: torch against the float64 reference, Triton in its interpreter."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from fieldnote.core.errors import PipelineError
from fieldnote.measure import check
from fieldnote.measure.implementations import runner
from fieldnote.registry.ops import OPS

TOL = {"rtol": 1e-4, "atol": 1e-4}

@pytest.mark.parametrize("op", list(OPS))
def test_torch_passes_every_case_on_the_cpu(op):
    cases = check.cases(op, OPS[op].cpu_test_shape, 7, None, small_only=False)
    table = check.run_checks(runner(op, "torch"), op, "torch", "cpu", cases, TOL)
    assert table["passed"].all(), table.to_string()
    names = set(table["case"])
    assert {"full", "fresh", "small"} <= names and {f"edge:{e.name}" for e in OPS[op].edge_cases} <= names
    assert table.loc[table["case"] == "fresh", "seed"].item() != 7


def test_compiled_runs_the_torch_function_through_inductor(tmp_path, monkeypatch):
    """On the CPU inductor emits C++ rather than the GPU's Triton, so this checks the wiring (arguments, the
    compile, the result against the float64 reference), not the GPU kernels: check_gpu does that."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    cases = check.cases("gelu", OPS["gelu"].cpu_test_shape, 7, None, small_only=True)
    table = check.run_checks(runner("gelu", "compiled"), "gelu", "compiled", "cpu", cases, TOL)
    assert table["passed"].all(), table.to_string()


def test_triton_kernels_pass_in_the_interpreter():
    """Triton's interpreter is chosen when the kernel module is imported, so this runs in its own process."""
    code = (
        "import json; from fieldnote.measure import check; from fieldnote.measure.implementations import runner; "
        "from fieldnote.registry.ops import OPS; "
        "from fieldnote.measure.triton_compat import fix_interpreter_scalar_index; "
        "fix_interpreter_scalar_index(); rows = []\n"
        "for op in [op for op in OPS if 'triton' in OPS[op].implementations]:\n"
        "    t = check.run_checks(runner(op, 'triton'), op, 'triton', 'cpu', check.cases(op, {}, 7, None, True), "
        f"{TOL})\n"
        "    rows += t.to_dict('records')\n"
        "wide = {'rows': 3, 'cols': 2500}\n"  # past the seed's 1024-float block: the sweep's width 4096
        "t = check.run_checks(runner('layernorm', 'triton'), 'layernorm', 'triton', 'cpu', "
        f"[check.Case('wide', wide, 7, OPS['layernorm'].inputs(wide, 7))], {TOL})\n"
        "rows += t.to_dict('records')\n"
        "print(json.dumps(rows))")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    table = pd.DataFrame(json.loads(run.stdout.splitlines()[-1]))
    assert table["passed"].all(), table.to_string()
    assert set(table["op"]) == {op for op in OPS if "triton" in OPS[op].implementations}
    assert {"edge:constant-rows", "wide"} <= set(table["case"])


def test_an_unwritten_element_fails():
    ref = np.ones((4, 4))
    out = np.ones((4, 4), dtype=np.float32)
    out[2, 3] = np.nan  # the poison a kernel left in place
    result = check.compare(out, ref, **TOL)
    assert not result["passed"] and result["nonfinite_elements"] == 1


def test_a_comparison_in_chunks_gives_the_numbers_of_one_over_the_whole_array(monkeypatch):
    """Worst errors, non-finite counts and the verdict the same whichever chunk holds them, the last chunk short;
    NaN in the reference kept as NaN, as a comparison of whole arrays keeps it."""
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((37, 29))
    out = (ref + rng.standard_normal(ref.shape) * 1e-5).astype(np.float32)
    out.flat[[0, 500, 1072]] = [np.nan, np.inf, 5.0]
    whole = check.compare(out, ref, **TOL)
    monkeypatch.setitem(check.COMPARED_AT_ONCE, "cpu", 100)
    assert check.compare(out, ref, **TOL) == whole
    assert whole["nonfinite_elements"] == 2 and not whole["passed"]
    assert whole["max_abs_error"] == pytest.approx(abs(5.0 - ref.flat[1072]))
    ref.flat[700] = np.nan
    assert np.isnan(check.compare(out, ref, **TOL)["worst_tolerance_ratio"])


def test_error_just_outside_tolerance_fails_and_inside_passes():
    ref = np.full(8, 2.0)
    assert check.compare((ref + 1.0e-4 + 2.0e-4 * 0.99).astype(np.float32), ref, **TOL)["passed"]
    assert not check.compare((ref + 1.0e-4 + 2.0e-4 * 1.05).astype(np.float32), ref, **TOL)["passed"]


def test_a_wrong_kernel_fails_the_gate_naming_op_implementation_and_shape():
    def transposed(t, shape):  # a classic tail bug: the last step of K never accumulated
        return t["a"][:, :-1] @ t["b"][:-1]

    cases = check.cases("matmul", {"m": 32, "n": 32, "k": 32}, 7, None, small_only=False)
    table = check.run_checks(transposed, "matmul", "cuda", "cpu", cases, TOL)
    with pytest.raises(PipelineError, match=r"check failed: matmul / cuda at 32x32x32 \(full, cpu\): max abs error"):
        check.gate(table)


def test_a_check_holds_the_gpu_for_its_reference_run_and_comparison(monkeypatch):
    """The lock a check takes covers the implementation's call, and the float64 reference and the comparison beside
    it on the same device (on the GPU, GPU work that a measurement window must not overlap)."""
    from contextlib import contextmanager

    held, seen = [], []

    @contextmanager
    def hold(case):
        held.append(True)
        yield
        held.pop()

    def run(t, shape):
        seen.append(("run", bool(held)))
        return runner("gelu", "torch")(t, shape)

    for name in ("reference", "compare"):
        real = getattr(check, name)
        monkeypatch.setattr(check, name, lambda *a, _r=real, _n=name: seen.append((_n, bool(held))) or _r(*a))
    cases = check.cases("gelu", OPS["gelu"].cpu_test_shape, 7, None, small_only=True)
    assert check.run_checks(run, "gelu", "torch", "cpu", cases, TOL, hold=hold)["passed"].all()
    assert set(seen) == {("run", True), ("reference", True), ("compare", True)}


def test_the_reference_comes_from_the_inputs_before_the_run():
    """A kernel that zeroes its inputs and returns the op of what it left would agree with a reference computed after
    it: the reference is computed first, from the inputs as drawn."""
    names = OPS["gelu"].torch_args

    def zeroing(t, shape):
        for n in names:
            t[n].zero_()
        return runner("gelu", "torch")(t, shape)

    cases = check.cases("gelu", OPS["gelu"].cpu_test_shape, 7, None, small_only=True)
    table = check.run_checks(zeroing, "gelu", "cuda", "cpu", cases, TOL)
    assert not table["passed"].any(), table.to_string()


COMPILE_WORKERS = """
import json, os, sys
import numpy as np, torch
import torch._inductor.async_compile as async_compile
from fieldnote.measure.implementations import runner
x = torch.from_numpy(np.ones((8, 16), np.float32)).to(sys.argv[1])
runner("gelu", "compiled")({"x": x, "bias": x[0].clone(), "out": torch.empty_like(x)}, {})
def descendants(pid):
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in open(f"/proc/{pid}/task/{task}/children").read().split():
            yield open(f"/proc/{child}/cmdline").read()
            yield from descendants(child)
print(json.dumps({"threads": async_compile.get_compile_threads(),
                  "workers": sum("compile_worker" in c for c in descendants(os.getpid()))}))
"""


def compiled_gelu(tmp_path, device: str, threads: str | None) -> dict:
    """A GELU's compile in a fresh process: the compile threads inductor used and its compile workers alive."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)}
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    env.update({"TORCHINDUCTOR_COMPILE_THREADS": threads} if threads else {})
    run = subprocess.run([sys.executable, "-c", COMPILE_WORKERS, device], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("threads, expected", [(None, 1), ("2", 2)])
def test_a_compile_has_one_thread(tmp_path, threads, expected):
    """Unless the user sets TORCHINDUCTOR_COMPILE_THREADS: then theirs (the second case shows the test would see
    any other number). On the CPU inductor starts no pool for C++ either way; test_gpu looks for the workers."""
    assert compiled_gelu(tmp_path, "cpu", threads)["threads"] == expected


def test_every_op_gives_up_the_worker_pool(monkeypatch):
    """The matrix products too: max-autotune compiles their GEMM templates side by side in threads without it."""
    import torch._inductor.config as inductor

    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    monkeypatch.setattr(inductor, "compile_threads", 7)
    for op in OPS:
        inductor.compile_threads = 7
        runner(op, "compiled")
        assert inductor.compile_threads == 1, op
