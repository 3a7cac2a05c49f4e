"""The adversarial suite on the GPU: kernels and runners of our own that cheat the way the kernel-benchmark
write-ups document, each caught by the verification of the timed calls (verified.py) with one line naming the
subject, the call and what differed. docs/integrity.md lists every class and its defence."""
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from test_verified import cached_by_pointer, honest

from fieldnote.core.errors import PipelineError
from fieldnote.measure.build import cuda as build
from fieldnote.registry.ops import KernelVariant, LaunchContract
from fieldnote.registry.ops.gelu import ELEMENTWISE
from fieldnote.registry.ops.matmul import abc_mnk, tile_16x16_grid

pytestmark = pytest.mark.gpu
CHEATS = ROOT / "tests" / "cuda" / "cheats"
SHAPE = {"rows": 4096, "cols": 768}  # the seed shape
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
MATMUL = {"m": 1024, "n": 1024, "k": 1024}
# tests/cuda/cheats/matmul_memo_*.cu, by what each keys its results by, with the results it keeps
MEMOS = [("matmul_memo_content_1slot", 1), ("matmul_memo_content_4slots", 4), ("matmul_memo_pointer_1slot", 1),
         ("matmul_memo_pointer_4slots", 4), ("matmul_memo_both_1slot", 1), ("matmul_memo_both_4slots", 4)]
BY_POINTER_ALONE = [m for m in MEMOS if "_pointer_" in m[0]]


def tensors():
    import torch

    rng = np.random.default_rng(20260910)
    return {"x": torch.from_numpy(rng.standard_normal((4096, 768), dtype=np.float32)).cuda(),
            "bias": torch.from_numpy(rng.standard_normal(768, dtype=np.float32)).cuda(),
            "out": torch.empty(4096, 768, device="cuda")}


def measured(run, name):
    from fieldnote.measure.verified import Measured

    return Measured(run, tensors(), SHAPE, "gelu", f"adversarial: gelu / {name} at 4096x768", TOLERANCE)


def cheat_kernel(tmp_path: Path, name: str, op: str = "gelu", contract: LaunchContract = ELEMENTWISE):
    from fieldnote.measure.implementations import runner

    cubin, _, _ = build.compile_source(CHEATS / f"{name}.cu", "sm_90")
    path = tmp_path / f"{name}.cubin"
    path.write_bytes(cubin)
    return runner(op, "cuda", KernelVariant(name, op, contract, "a cheat"), path)


def spans(calls: dict):
    from fieldnote.measure import timing
    return timing.spans(calls, rounds=2, iterations=20, warmup=3, clock=timing.EventClock())


def memo_contract(slots: int) -> LaunchContract:
    """tests/cuda/cheats/matmul_memo.cuh's launch: 16 x 16 tiles of C, the store of `slots` results a workspace,
    and (with a memo) the one-thread commit of the call's key after the product, on the same stream."""
    def args(t, s):
        a, b, c, *sizes = abc_mnk(t, s)
        return a, b, c, t["memo_store"], *sizes

    commit = LaunchContract(entry="matmul_memo_commit", block=(1, 1, 1), grid=lambda s: (1, 1, 1), args=abc_mnk)
    return LaunchContract(entry="matmul_memo", block=(16, 16, 1), grid=tile_16x16_grid, args=args,
                          workspace=lambda s: {"memo_store": (slots * s["m"], s["n"])},
                          after=(commit,) if slots else ())


def matmul_tensors(seed: int = 20260910) -> dict:
    import torch

    from fieldnote.registry.ops import OPS

    tensors = {n: torch.from_numpy(a).cuda() for n, a in OPS["matmul"].inputs(MATMUL, seed).items()}
    return tensors | {"out": torch.empty(MATMUL["m"], MATMUL["n"], device="cuda")}


def memo_measured(tmp_path: Path, name: str, slots: int):
    """A memoizing matmul (or, with 0 slots, its honest product) at 1024^3, on inputs drawn as the op draws them."""
    from fieldnote.measure.verified import Measured

    return Measured(cheat_kernel(tmp_path, name, "matmul", memo_contract(slots)), matmul_tensors(), MATMUL, "matmul",
                    f"adversarial: matmul / {name} at 1024x1024x1024", TOLERANCE)


def left_on_another_stream():
    """The work launched on a side stream, behind a long spin, and the call returned at once: the events on the
    timing stream see nothing to wait for."""
    import torch

    side = torch.cuda.Stream()

    def run(t, s):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(20_000_000)
            honest(t, s)
        return t["out"]
    return run


@pytest.mark.parametrize("name, call, why", [
    ("gelu_stale", 1, "output elements not finite"),
    ("gelu_every_fourth", 1, "output elements not finite"),
    ("gelu_half", 1, "outside the tolerance"),
    ("gelu_zero_inputs", 1, "input 'x' was changed by the call"),
])
def test_a_cheating_kernel_is_caught_on_the_call_where_it_cheats(tmp_path, name, call, why):
    with pytest.raises(PipelineError) as e:
        spans({name: measured(cheat_kernel(tmp_path, name), name)})
    assert str(e.value).startswith(f"adversarial: gelu / {name} at 4096x768: timed call {call} computed a wrong")
    assert why in str(e.value)


@pytest.mark.parametrize("name, make, call, why", [
    ("left_on_another_stream", left_on_another_stream, 1, "output elements not finite"),
    ("cached_by_pointer", cached_by_pointer, 1, "outside the tolerance"),  # the warm-up's inputs were the last
])
def test_a_cheating_runner_is_caught(name, make, call, why):
    with pytest.raises(PipelineError) as e:
        spans({name: measured(make(), name)})
    assert f"timed call {call} computed a wrong result" in str(e.value) and why in str(e.value)


def test_a_cheat_in_graph_replay_is_caught(tmp_path):
    """A replay is primed and verified as one call: the stale kernel's replays leave the poison. (Work left on a
    side stream cannot be captured at all: the capture fails with unjoined work.)"""
    from fieldnote.measure import timing
    fn = measured(cheat_kernel(tmp_path, "gelu_stale"), "gelu_stale")
    with pytest.raises(PipelineError, match="timed call 1 computed a wrong result"):
        timing.graph_spans({"graph": fn}, rounds=1, iterations=5, warmup=2, replays=2)


def test_the_honest_kernel_passes_every_timed_call(tmp_path):
    from fieldnote.measure.implementations import runner
    from fieldnote.registry.ops import OPS

    variant = OPS["gelu"].variant("gelu_bias_tanh")
    cubin, _, _ = build.compile_source(ROOT / variant.source, "sm_90")
    (tmp_path / "honest.cubin").write_bytes(cubin)
    fn = measured(runner("gelu", "cuda", variant, tmp_path / "honest.cubin"), "gelu_bias_tanh")
    spans({"gelu_bias_tanh": fn})
    fn.checksum()
    assert fn.calls == 40


@pytest.mark.parametrize("name, slots", MEMOS)
def test_a_memo_hands_back_what_it_remembers_where_its_key_repeats(tmp_path, name, slots):
    """Where inputs repeat, the memos do cheat (so the tests below catch or price a working memo): inputs x, then
    others, then x again with an element no key samples changed. A memo still holding x's product hands it back:
    keyed by pointer alone, every call after the first hits; by content, x's key outlives the others' in four
    slots, not in one."""
    import torch

    run = cheat_kernel(tmp_path, name, "matmul", memo_contract(slots))
    t, other = matmul_tensors(1), matmul_tensors(2)
    x = {n: t[n].clone() for n in ("a", "b")}
    first = run(t, MATMUL).clone()
    t["a"].copy_(other["a"]), t["b"].copy_(other["b"])  # into the same buffers, as the harness loads them
    run(t, MATMUL)
    t["a"].copy_(x["a"]), t["b"].copy_(x["b"])
    t["a"][1, 1] += 1.0  # A's samples are elements 0, M*K/8, ...: row 1 of C changes, no key does
    t["out"].fill_(float("nan"))
    again = run(t, MATMUL)
    assert torch.equal(again, first) == ("_pointer_" in name or slots > 1)
    assert bool(torch.isfinite(again).all())


@pytest.mark.parametrize("name, slots", BY_POINTER_ALONE)
def test_a_matmul_remembered_by_pointer_is_caught_at_its_first_stale_result(tmp_path, name, slots):
    """The buffers are the same every call, so every call after the first warm-up one hits: timed call 1 is handed
    the product of the warm-up's inputs, not of the fresh ones drawn for it."""
    with pytest.raises(PipelineError) as e:
        spans({name: memo_measured(tmp_path, name, slots)})
    assert str(e.value).startswith(f"adversarial: matmul / {name} at 1024x1024x1024: timed call 1 computed a wrong "
                                   "result: outside the tolerance")


@pytest.mark.parametrize("name, slots", [m for m in MEMOS if m not in BY_POINTER_ALONE])
def test_a_matmul_remembered_by_content_computes_every_timed_call_and_is_timed_as_a_product(tmp_path, name, slots):
    """Fresh inputs every timed call: no content key (with the pointers or without) matches an earlier call's, so
    every timed call computes and is verified, and its median span is the product's, timed beside it (the same
    source with the memo compiled out; 0.8 of it leaves room for noise, a copy from the store costs far less)."""
    cheat, product = memo_measured(tmp_path, name, slots), memo_measured(tmp_path, "matmul_memo_off", 0)
    cheat_and_product = {name: cheat, "matmul_memo_off": product}
    samples, _ = spans(cheat_and_product)
    cheat.checksum(), product.checksum()
    assert cheat.calls == product.calls == 40
    median = {s: statistics.median(r["span_us"] for r in samples if r["subject"] == s) for s in cheat_and_product}
    assert median[name] >= 0.8 * median["matmul_memo_off"], median


BUILD_TWICE = """
import sys
from pathlib import Path
from fieldnote.measure.build import cuda
source = Path(sys.argv[1])
for _ in range(2):
    cubin, ptx, report = cuda.build(source, "gelu_bias_tanh", "sm_90")
    print(report["registers"])
"""


def test_a_variant_built_again_on_the_same_machine_keeps_its_ptxas_report(tmp_path):
    """The driver's compute cache (~/.nv/ComputeCache, kept between builds) used to hand back a cached compile with
    an empty ptxas log: twice in one process, then again in a fresh one, the report is there."""
    source = ROOT / "kernels" / "cuda" / "gelu" / "gelu_bias_tanh.cu"
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_CACHE_DISABLE"}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", BUILD_TWICE, str(source)], capture_output=True, text=True,
                              env=env, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.split()) == 2 and all(int(r) > 0 for r in done.stdout.split())


def sanitized(tmp_path: Path, variants: dict[str, Path], contracts: dict | None = None, op: str = "gelu"):
    from fieldnote.measure import sanitize
    if sanitize.executable() is None:
        pytest.skip("compute-sanitizer not found")
    job = {"op": op, "variants": {k: str(v) for k, v in variants.items()}, "seed": 7, "contracts": contracts or {}}
    return sanitize.sanitize(job, tmp_path)


def sanitized_variant(tmp_path: Path, op: str, name: str):
    """A registered variant built for sm_90 (sm_90a where it must be) and run under every tool."""
    from fieldnote.registry.ops import OPS

    v = OPS[op].variant(name)
    cubin, _, _ = build.compile_source(ROOT / v.source, v.target("sm_90"))
    (tmp_path / f"{name}.cubin").write_bytes(cubin)
    return sanitized(tmp_path, {name: tmp_path / f"{name}.cubin"}, op=op)


def test_the_sanitizer_catches_a_missing_barrier_every_time_at_the_smallest_shape(tmp_path):
    """The planted kernel, launched by gelu_bias_tanh's contract, three times over: racecheck reports it at every
    shape every time; memcheck, synccheck and initcheck have nothing to say of it."""
    cubin, _, _ = build.compile_source(ROOT / "tests" / "cuda" / "gelu_missing_barrier.cu", "sm_90")
    (tmp_path / "racy.cubin").write_bytes(cubin)
    for _ in range(3):
        table = sanitized(tmp_path, {"gelu_missing_barrier": tmp_path / "racy.cubin"},
                          {"gelu_missing_barrier": "gelu_bias_tanh"})
        race = table[table["tool"] == "racecheck"]
        assert len(race) >= 1 and (race["errors"] > 0).all(), table
        assert (table[table["tool"] != "racecheck"]["errors"] == 0).all(), table
    assert "Race" in race["first_message"].iloc[0] or "hazard" in race["first_message"].iloc[0]


def test_the_sanitizer_passes_the_shipped_gelu_variants(tmp_path):
    from fieldnote.registry.ops import OPS

    variants = {}
    for name in ("gelu_bias_tanh", "gelu_bias_sigmoid_vec4"):
        v = OPS["gelu"].variant(name)
        cubin, _, _ = build.compile_source(ROOT / v.source, "sm_90")
        (tmp_path / f"{name}.cubin").write_bytes(cubin)
        variants[name] = tmp_path / f"{name}.cubin"
    table = sanitized(tmp_path, variants)
    assert set(table["tool"]) == {"memcheck", "racecheck", "synccheck", "initcheck"}
    assert (table["errors"] == 0).all(), table[table["errors"] > 0]


def test_the_sanitizer_passes_the_tma_matmul_on_both_of_its_paths(tmp_path):
    """TMA, mbarriers and wgmma at 70x132x36 (every dimension past a tile), the mma.sync entry at 17x19x23."""
    table = sanitized_variant(tmp_path, "matmul", "matmul_3xtf32_wgmma_tma")
    assert {"small 70x132x36", "small 17x19x23"} <= set(table["shape"]), table
    assert (table["errors"] == 0).all(), table[table["errors"] > 0]


def test_the_sanitizer_passes_the_batched_triangle(tmp_path):
    """The transposes, TMA over the packed channels and the batched wgmma, at the op's small and edge shapes."""
    table = sanitized_variant(tmp_path, "triangle", "triangle_3xtf32_wgmma")
    assert (table["errors"] == 0).all(), table[table["errors"] > 0]


def test_the_sanitizer_passes_split_k(tmp_path):
    """The sliced products and their sum, at the matmul's small and edge shapes (where K is long enough to
    slice) and at 256^3 through the GPU tests' gate."""
    table = sanitized_variant(tmp_path, "matmul", "matmul_3xtf32_wgmma_tma_splitk")
    assert (table["errors"] == 0).all(), table[table["errors"] > 0]


def test_the_sanitizer_passes_the_cp_async_wgmma_where_stages_are_reused(tmp_path):
    """The attempt fed by cp.async at 64x128x520 (17 K steps through 6 stages): the H200's racecheck reported 100
    WAR hazards on B's tile there while one lane per consumer warp released a stage; every consumer thread
    releases it now."""
    table = sanitized_variant(tmp_path, "matmul", "matmul_3xtf32_wgmma_cpasync_64x128")
    assert "small 64x128x520" in set(table["shape"]), table
    assert (table["errors"] == 0).all(), table[table["errors"] > 0]
