"""On the GPU: every op x implementation through the gate, and the gate catching the broken pipeline."""
import dataclasses
import functools
from pathlib import Path

import pytest
from conftest import ROOT

from fieldnote.measure import check, inputs
from fieldnote.measure.build import builder
from fieldnote.measure.implementations import runner
from fieldnote.registry.ops import OPS
from fieldnote.registry.ops.matmul import CPASYNC_2BUF_64X64
from fieldnote.registry.toolchains import TOOLCHAINS

pytestmark = pytest.mark.gpu
TOL = {"rtol": 1e-4, "atol": 1e-4}
SEED = 20260910
FULL = {"matmul": {"m": 1024, "n": 1024, "k": 1024}, "gelu": {"rows": 4096, "cols": 768},
        "layernorm": {"rows": 4096, "cols": 768}, "triangle": {"n": 128, "channels": 32},
        "neighbor": {"nodes": 4096, "features": 64, "edges": 65536},
        "trimul": {"batch": 2, "n": 100, "channels": 128, "hidden": 128}}
TAILS = {"matmul": [{"m": 130, "n": 70, "k": 97}, {"m": 64, "n": 64, "k": 33}, {"m": 1, "n": 1024, "k": 1024}],
         "layernorm": [{"rows": 5, "cols": 1024}, {"rows": 5, "cols": 4}, {"rows": 2, "cols": 1}],
         # rows not whole tiles; channels and hidden past one tile's 128 and not whole K steps; three batches (hidden
         # a multiple of 32: cuEquivariance's kernels take no other)
         "trimul": [{"batch": 1, "n": 130, "channels": 196, "hidden": 160},
                    {"batch": 3, "n": 33, "channels": 12, "hidden": 32},
                    # 2 hidden not a multiple of 32: a warp's columns run past hidden while its block walks on
                    {"batch": 1, "n": 40, "channels": 20, "hidden": 36}]}


@functools.cache
def cubin_of(source: str, entry: str, arch: str = "sm_90", toolchain: str = "cuda") -> bytes:
    """Each source is built once per session, by its toolchain."""
    return builder(TOOLCHAINS[toolchain]).build(ROOT / source, entry, arch)[0]


def cuda_runner(tmp_path, op, variant, source=None):
    path = tmp_path / f"{variant.name}.cubin"
    path.write_bytes(cubin_of(source or variant.source, variant.contract.entry, variant.target("sm_90"),
                              variant.toolchain if source is None else "cuda"))
    return runner(op, variant.toolchain, variant, path)


def implementations(tmp_path, op):
    """(name, implementation, runner) of each implementation of `op` there is here."""
    yield "torch", "torch", runner(op, "torch")
    if "triton" in OPS[op].implementations:
        yield "triton", "triton", runner(op, "triton")
    if OPS[op].library:
        yield "library", "library", runner(op, "library")
    for v in OPS[op].kernel_variants.values():
        yield v.name, v.toolchain, cuda_runner(tmp_path, op, v)


@pytest.mark.parametrize("op", list(OPS))
def test_every_implementation_passes_full_small_and_edge_cases(tmp_path, op):
    """Each at every case (the library at those inside its declared range)."""
    for name, implementation, run in implementations(tmp_path, op):
        variant = name if name in OPS[op].kernel_variants else None
        refusal = functools.partial(OPS[op].refusal, implementation, variant)
        cases = check.cases(op, FULL[op], SEED, None, small_only=False, implementation=implementation)
        cases += [check.Case("tail", s, SEED, OPS[op].inputs(s, SEED)) for s in TAILS.get(op, []) if not refusal(s)]
        table = check.run_checks(run, op, name, "cuda", cases, TOL)
        assert table["passed"].all(), table.to_string()


def test_layernorm_rows_past_1024_floats_where_a_variant_takes_them(tmp_path):
    """The wide paths (a block a row, as the sweep's width 4096 takes) and the odd widths past 1024 (two rows a
    block to 4093 for the paired kernel, an odd count of rows leaving its last block's second row empty), for each
    variant whose launch contract takes the shape."""
    wide = [{"rows": 3, "cols": 2052}, {"rows": 3, "cols": 2050}, {"rows": 2, "cols": 8192},
            {"rows": 5, "cols": 3001}, {"rows": 3, "cols": 4093}, {"rows": 3, "cols": 4095}]
    tried = 0
    for variant in OPS["layernorm"].kernel_variants.values():
        shapes = [s for s in wide if not variant.contract.supports(s)]
        cases = [check.Case("wide", s, SEED, OPS["layernorm"].inputs(s, SEED)) for s in shapes]
        if cases:
            table = check.run_checks(cuda_runner(tmp_path, "layernorm", variant), "layernorm", variant.name, "cuda",
                                     cases, TOL)
            assert table["passed"].all(), table.to_string()
            tried += len(cases)
    assert tried >= 6  # warp_row_registers and warp_row_pipelined take all three


def test_the_gate_catches_the_broken_pipelined_matmul(tmp_path):
    """The two defects of the field note: buffer offsets in the wrong units, the last tile from the wrong buffer."""
    contract = dataclasses.replace(CPASYNC_2BUF_64X64, entry="matmul_cpasync_2buf_64x64_broken")
    broken = dataclasses.replace(OPS["matmul"].variant("matmul_cpasync_2buf_64x64"),
                                 name="matmul_cpasync_2buf_64x64_broken", contract=contract)
    run = cuda_runner(tmp_path, "matmul", broken, "tests/cuda/matmul_cpasync_2buf_64x64_broken.cu")
    full = check.cases("matmul", FULL["matmul"], SEED, None, small_only=False)[:1]
    table = check.run_checks(run, "matmul", "cuda", "cuda", full, TOL)
    assert not table["passed"].any()
    assert table["max_abs_error"].item() > 1e-2
    with pytest.raises(Exception, match=r"check failed: matmul / cuda at 1024x1024x1024 \(full, cuda\)"):
        check.gate(table)


def test_summing_each_k_step_apart_keeps_3xtf32_inside_the_gate_at_4096(tmp_path):
    """masksplit chains 1536 mma into each sum and the tensor core's accumulation truncates: it failed the gate
    at 4096^3 (max abs error 7.3e-4 on the H200). blocked, the same kernel with each K step summed apart, passes,
    as do 8warps, its eight-warp form, presplit (K steps of 16) in both forms, and the wgmma kernel."""
    shape = {"m": 4096, "n": 4096, "k": 4096}
    inputs_ = OPS["matmul"].inputs(shape, SEED)
    case = [check.Case("full", shape, SEED, inputs_)]
    ratio = {}
    for name in ("matmul_3xtf32_mma_64x64_masksplit", "matmul_3xtf32_mma_64x64_blocked",
                 "matmul_3xtf32_mma_64x64_8warps", "matmul_3xtf32_mma_64x64_presplit",
                 "matmul_3xtf32_mma_64x64_presplit_8warps", "matmul_3xtf32_wgmma_64x64"):
        table = check.run_checks(cuda_runner(tmp_path, "matmul", OPS["matmul"].variant(name)), "matmul", name,
                                 "cuda", case, TOL)
        ratio[name] = (table["passed"].item(), table["max_abs_error"].item())
    assert ratio["matmul_3xtf32_mma_64x64_masksplit"][0] is False, ratio
    assert ratio["matmul_3xtf32_mma_64x64_blocked"][0] is True, ratio
    assert ratio["matmul_3xtf32_mma_64x64_8warps"][0] is True, ratio
    assert ratio["matmul_3xtf32_mma_64x64_presplit"][0] is True, ratio
    assert ratio["matmul_3xtf32_mma_64x64_presplit_8warps"][0] is True, ratio
    assert ratio["matmul_3xtf32_wgmma_64x64"][0] is True, ratio


def test_the_tma_matmul_takes_each_of_its_entries_inside_the_gate(tmp_path):
    """matmul_3xtf32_wgmma_tma routes by shape: 128x128 tiles at 4096^3 (K chained through 128 stages), 64x128 at
    1000^3 (no dimension a multiple of a tile), the mma.sync kernel where a row is no 16-byte stride."""
    import torch

    variant = OPS["matmul"].variant("matmul_3xtf32_wgmma_tma")
    run = cuda_runner(tmp_path, "matmul", variant)
    routes = {"4096x4096x4096": "matmul_3xtf32_wgmma_tma_large", "1000x1000x1000": "matmul_3xtf32_wgmma_tma_small",
              "1023x1025x1027": "matmul_3xtf32_wgmma_tma_fallback"}
    for label, entry in routes.items():
        shape = OPS["matmul"].parse_label(label)
        inputs_ = OPS["matmul"].inputs(shape, SEED)
        tensors = {n: torch.from_numpy(a).cuda() for n, a in inputs_.items()}
        assert (variant.contract.route(tensors, shape) or variant.contract).entry == entry
        table = check.run_checks(run, "matmul", variant.name, "cuda", [check.Case("full", shape, SEED, inputs_)], TOL)
        assert table["passed"].all(), table.to_string()


def gated_at(tmp_path, op, name, labels):
    """A variant through the gate at each shape in turn, in one process (its scratch made once per shape)."""
    variant = OPS[op].variant(name)
    run = cuda_runner(tmp_path, op, variant)
    for label in labels:
        shape = OPS[op].parse_label(label)
        case = check.Case("full", shape, SEED, OPS[op].inputs(shape, SEED))
        table = check.run_checks(run, op, name, "cuda", [case], TOL)
        assert table["passed"].all(), table.to_string()


def test_the_padded_tma_matmul_copies_then_multiplies_inside_the_gate(tmp_path):
    """matmul_3xtf32_wgmma_tma_padded at shapes whose rows are no 16-byte stride: the two copies into scratch
    rows, then the 64x128 or the 128x128 tiles on them; twice each, the scratch reused."""
    gated_at(tmp_path, "matmul", "matmul_3xtf32_wgmma_tma_padded",
             ("1023x1025x1027", "2047x2049x515", "1023x1025x1027", "17x19x23"))


def test_the_batched_triangle_packs_multiplies_and_unpacks_inside_the_gate(tmp_path):
    """triangle_3xtf32_wgmma at the sweep's sizes: 64 x 128 and 128 x 128 tiles, n a multiple of 32 or not
    (rows padded to a K step), channels fewer than a transpose's 32; twice at one size, the scratch reused."""
    gated_at(tmp_path, "triangle", "triangle_3xtf32_wgmma", ("128x32", "512x32", "300x30", "100x32", "128x32", "7x5"))


def test_the_triangle_by_size_takes_the_tiles_and_the_batched_product_inside_the_gate(tmp_path):
    """triangle_by_size on both sides of its threshold: the tiles' entry (64x32, 128x24), the batched product's
    (129x8, n a K step past the tiles' reach; 300x30, 128 x 128 tiles)."""
    gated_at(tmp_path, "triangle", "triangle_by_size", ("64x32", "128x24", "129x8", "300x30"))


def test_split_k_slices_multiplies_and_sums_inside_the_gate(tmp_path):
    """matmul_3xtf32_wgmma_tma_splitk where it slices K (256^3, 512^3, a K that leaves the last slice short) and
    where it does not (1024^3); twice at one shape, the partials' scratch reused."""
    gated_at(tmp_path, "matmul", "matmul_3xtf32_wgmma_tma_splitk",
             ("256x256x256", "512x512x512", "64x128x520", "200x300x1000", "1024x1024x1024", "256x256x256"))


def test_the_cluster_split_k_sums_its_slices_through_shared_memory_inside_the_gate(tmp_path):
    """matmul_3xtf32_wgmma_cluster_splitk at each cluster size (8: 256^3 and 255x257x259, rows no 16-byte stride;
    4: 300x500x100; 2: 70x132x36), with slices of K past its end (64x128x520: two of eight empty), and where it
    takes no cluster (512^3: split-K's four slices; 1000^3, 17x19x23); twice at one shape."""
    import fieldnote.registry.ops.matmul as matmul

    splits = {"256x256x256": 8, "255x257x259": 8, "64x128x520": 8, "300x500x100": 4, "70x132x36": 2,
              "512x512x512": 1, "1000x1000x1000": 1, "17x19x23": 1}
    assert {label: matmul.cluster_splits(OPS["matmul"].parse_label(label)) for label in splits} == splits
    gated_at(tmp_path, "matmul", "matmul_3xtf32_wgmma_cluster_splitk", (*splits, "256x256x256"))


def test_full_inputs_on_disk_are_the_ones_checked(tmp_path):
    path = tmp_path / "m.npz"
    inputs.write("matmul", FULL["matmul"], SEED, path, tmp_path / "m.json")
    cases = check.cases("matmul", FULL["matmul"], SEED, inputs.read(path), small_only=False)
    assert inputs.sha256(cases[0].inputs["a"]).startswith("14bd2864")


def staged(tmp_path, op, shape, variant_name):
    """Inputs written and the variant's cubin built, as the pipeline's workload expects them on disk."""
    npz = tmp_path / "in.npz"
    inputs.write(op, shape, SEED, npz, tmp_path / "in.json")
    variant = OPS[op].variant(variant_name)
    cubin = tmp_path / f"{variant_name}.cubin"
    cubin.write_bytes(cubin_of(variant.source, variant.contract.entry, variant.target("sm_90")))
    return npz, cubin


def test_spans_and_graph_replay_of_every_implementation(tmp_path):
    """Event spans and graph replay run for torch, Triton and a cuda.core launch, and replay leaves the
    output correct (the cuda.core launch follows torch onto the capture stream)."""
    from fieldnote.measure import gpu, timing, workload
    shape = {"rows": 64, "cols": 768}
    npz, cubin = staged(tmp_path, "layernorm", shape, "layernorm_block_row_1pass")
    calls = {impl: workload.prepare("layernorm", impl, npz, shape, "layernorm_block_row_1pass", cubin, TOL)
             for impl in ("torch", "triton", "cuda")}
    eager, states = timing.spans(calls, 2, 10, 2, timing.EventClock(), gpu.State())
    graph = timing.graph_spans(calls, 2, 10, 2, replays=3, state=gpu.State())
    assert len(eager) == 60 and len(graph) == 18 and len(states) == 6
    assert all(0 < row["span_us"] < 10_000 for row in eager + graph)
    assert states[0]["sm_clock_mhz"] > 0
    assert all(fn.calls == 2 * 10 + 2 * 3 for fn in calls.values())  # every timed call and replay verified
    calls["cuda"].prime(0)  # a set never drawn before, checked against its own float64 reference
    calls["cuda"]()
    calls["cuda"].verify(0)


@pytest.mark.parametrize("backend", ["nsys", "cupti"])
def test_capture_backends_see_every_launch_of_one_session(tmp_path, backend):
    """One profiled session of torch and the cuda kernel, as the capture stage runs it: whole launch counts, each
    kernel in its own range, every row carrying the GPU it ran on and its clocks."""
    from fieldnote.evidence.summary import summarize
    from fieldnote.measure import capture
    from fieldnote.measure.capture import backends

    module = backends.backend(backend)
    if not module.available():
        pytest.skip(f"{backend} not available here")
    shape = {"rows": 256, "cols": 768}
    npz, cubin = staged(tmp_path, "gelu", shape, "gelu_bias_tanh")
    subjects = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                "cuda": {"implementation": "cuda", "variant": "gelu_bias_tanh", "cubin": str(cubin)}}
    job = capture.Job("gelu", subjects, str(npz), shape, iterations=20, warmup=3, repeats=2)
    kernels = capture.session(module, job, tmp_path).assign(op="gelu", backend=backend)
    assert kernels["gpu_uuid"].str.startswith("GPU-").all() and (kernels["session_sm_clock_mhz"] > 0).all()
    summary = summarize(kernels).set_index(["subject", "capture"])
    assert summary.loc[("torch", 0), "launches_per_iteration"] == 2  # the add, then the GELU
    assert summary.loc[("cuda", 1), "launches_per_iteration"] == 1
    assert (summary["kernel_us_per_iteration"] > 0).all()


def test_ncu_reads_every_counter_of_the_hand_written_kernel(tmp_path):
    """Nsight Compute on the 3xTF32 matmul at the seed shape: each metric the capture asks for comes back, for every
    launch of the calls it profiles, one a call (a metric name this ncu does not know fails the whole capture)."""
    from fieldnote.measure import capture
    from fieldnote.measure.capture import ncu

    if not ncu.available():
        pytest.skip("ncu not available here")
    shape, variant = FULL["matmul"], "matmul_3xtf32_mma_64x64_blocked"
    npz, cubin = staged(tmp_path, "matmul", shape, variant)
    subjects = {"cuda": {"implementation": "cuda", "variant": variant, "cubin": str(cubin)}}
    job = capture.Job("matmul", subjects, str(npz), shape, iterations=10, warmup=3, repeats=1)
    counters = ncu.capture(job, tmp_path)
    per_launch = counters.groupby("launch")["name"].apply(set)
    assert len(per_launch) == ncu.PROFILED_CALLS and all(names == set(ncu.METRICS.values()) for names in per_launch)
    value = counters.groupby("name")["value"].median()
    assert value["registers"] > 0 and 0 < value["tensor_pipe"] <= 100 and 0 < value["issue_slots_busy"] <= 100


@pytest.mark.parametrize("op", list(OPS))
def test_compiled_passes_the_gate_at_the_full_shape(tmp_path, monkeypatch, op):
    """torch.compile (max-autotune, no CUDA graphs) of the torch reference: one compile per op here."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    cases = check.cases(op, FULL[op], SEED, None, small_only=False)[:1]
    table = check.run_checks(runner(op, "compiled"), op, "compiled", "cuda", cases, TOL)
    assert table["passed"].all(), table.to_string()


def test_torch_compile_times_its_candidates_through_the_lock(tmp_path, monkeypatch):
    """max-autotune of the matmul from a cold cache, as a check runs it: its candidates' timings each took the GPU
    alone (gpulock.autotuning), so this torch times them where the lock reaches."""
    from fieldnote.measure import gpulock
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    before = gpulock.timed_alone
    cases = check.cases("matmul", {"m": 384, "n": 384, "k": 384}, SEED, None, small_only=False)[:1]
    with gpulock.for_check("compiled"):
        table = check.run_checks(runner("matmul", "compiled"), "matmul", "compiled", "cuda", cases, TOL)
    assert table["passed"].all() and gpulock.timed_alone > before


def test_torch_compile_has_triton_compile_its_kernels_with_the_gpu_held_by_no_one(tmp_path, monkeypatch):
    """max-autotune at the matmul's odd small shape, from a cold cache: inductor compiles its candidates through
    `triton.compile` (gpulock.KERNEL_COMPILE), each with nothing held, wherever it compiles them (in threads before
    timing them; with its worker pool, again as it times them); no hold of the check's lasts the whole set (one
    did, 22 to 35 s in an h200-001 copy's run, every window waiting behind it)."""
    import json
    import os

    from fieldnote.measure import gpulock
    traced_lock(tmp_path, monkeypatch)
    before = gpulock.compiled_unheld
    cases = [c for c in check.cases("matmul", {"m": 64, "n": 64, "k": 64}, SEED, None, small_only=True)
             if OPS["matmul"].label(c.shape) == "70x132x36"]
    table = check.run_checks(runner("matmul", "compiled"), "matmul", "compiled", "cuda", cases, TOL,
                             hold=gpulock.per_case("compiled"))
    holds = [json.loads(line) for line in Path(os.environ["FIELDNOTE_GPU_TRACE"]).read_text().splitlines()]
    longest = max(h["released"] - h["taken"] for h in holds)
    print(f"{gpulock.compiled_unheld - before} kernel compiles unheld, {len(holds)} holds, longest {longest:.2f} s")
    assert len(cases) == 1 and table["passed"].all() and gpulock.compiled_unheld > before
    assert longest < 5, longest


def gpu_work_outside(trace: dict, holds: list[dict], slack_us: float) -> tuple[list[dict], list[dict]]:
    """From a chrome trace (its times in µs after baseTimeNanoseconds, on the host's clock) and gpulock's trace of
    holds (time.time()): the kernels, copies and fills that ran on the GPU outside every hold, give or take
    `slack_us`, and all of them."""
    base = trace["baseTimeNanoseconds"]
    spans = [((h["taken"] * 1e9 - base) / 1e3 - slack_us, (h["released"] * 1e9 - base) / 1e3 + slack_us)
             for h in holds]
    work = [e for e in trace["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    outside = [e for e in work if not any(s <= e["ts"] and e["ts"] + e["dur"] <= t for s, t in spans)]
    return outside, work


def gpu_work_outside_the_holds(tmp_path, run) -> tuple[object, list[dict], list[dict], list[dict]]:
    """`run()` under torch.profiler with every hold of the GPU lock traced: (its result, the kernels, copies and
    fills outside every hold, all of them, the holds). The trace's clock is checked against the host's first (a
    range bracketed by time.time_ns())."""
    import json
    import os
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile

    holds_file = Path(os.environ["FIELDNOTE_GPU_TRACE"])
    holds_file.unlink(missing_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        before = time.time_ns()
        with torch.profiler.record_function("fieldnote-clock"):
            time.sleep(0.001)
        after = time.time_ns()
        result = run()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())
    clock = next(e for e in trace["traceEvents"] if e.get("name") == "fieldnote-clock")
    assert before <= trace["baseTimeNanoseconds"] + clock["ts"] * 1e3 <= after, "the trace's clock is not the host's"
    holds = [json.loads(line) for line in holds_file.read_text().splitlines()]
    outside, work = gpu_work_outside(trace, holds, slack_us=100)
    return result, outside, work, holds


def traced_lock(tmp_path, monkeypatch) -> None:
    """A cold inductor cache, a lock and a trace of its holds of this test's own."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    monkeypatch.setenv("FIELDNOTE_GPU_TRACE", str(tmp_path / "holds.jsonl"))


def described(outside: list[dict], work: list[dict], holds: list[dict]) -> str:
    return f"{len(outside)} of {len(work)} GPU activities outside the {len(holds)} holds: " + ", ".join(
        sorted({e["name"][:60] for e in outside}))


@pytest.mark.parametrize("op, full", [("layernorm", {"rows": 2048, "cols": 768}),
                                      ("matmul", {"m": 384, "n": 384, "k": 384})])
def test_every_gpu_activity_of_a_compiled_check_is_inside_one_of_its_holds(tmp_path, monkeypatch, op, full):
    """A compiled check as the pipeline runs one, from a cold inductor cache (dynamo, inductor, Triton, autotuning,
    max-autotune's example inputs for a matrix product, every case), under torch.profiler, with every hold of the
    GPU lock traced: each kernel, copy and fill of this process ran on the GPU inside one of them, so no measurement
    window could have overlapped it, though the compile gives its hold up while inductor compiles
    (gpulock.COMPILE), at the measured shapes and at the small cases."""
    from fieldnote.measure import gpulock
    traced_lock(tmp_path, monkeypatch)
    cases = check.cases(op, full, SEED, None, small_only=False)
    table, outside, work, holds = gpu_work_outside_the_holds(tmp_path, lambda: check.run_checks(
        runner(op, "compiled"), op, "compiled", "cuda", cases, TOL, hold=gpulock.per_case("compiled")))
    assert table["passed"].all() and len(work) > len(cases) and len(holds) >= len(cases)
    assert not outside, described(outside, work, holds)


def test_a_measurements_compiled_subject_runs_on_the_gpu_only_inside_its_holds(tmp_path, monkeypatch):
    """A measurement's torch.compile subject prepared and called once as the timing stage does
    (workload.prepared_each), after its check compiled it (dynamo reset, as in a new process: inductor loads the
    graph from its cache while the subject holds nothing), under torch.profiler with every hold traced: each
    kernel, copy and fill inside one of them."""
    import torch

    from fieldnote.measure import gpulock, workload
    traced_lock(tmp_path, monkeypatch)
    op, shape = "layernorm", {"rows": 2048, "cols": 768}
    cases = check.cases(op, shape, SEED, None, small_only=False)[:1]
    with gpulock.for_check("compiled"):
        assert check.run_checks(runner(op, "compiled"), op, "compiled", "cuda", cases, TOL)["passed"].all()
    torch._dynamo.reset()
    calls, outside, work, holds = gpu_work_outside_the_holds(tmp_path, lambda: workload.prepared_each(
        {"compiled": lambda: workload.prepare_drawn(op, "compiled", shape, SEED)}, {"compiled": "compiled"}))
    assert list(calls) == ["compiled"] and work and holds
    assert not outside, described(outside, work, holds)


def test_a_sweep_session_captures_every_point_under_its_own_name(tmp_path):
    """Points named implementation@shape, each with inputs drawn at its shape, in one nsys session."""
    from fieldnote.evidence.summary import summarize
    from fieldnote.evidence.sweep import subjects, table
    from fieldnote.measure import capture
    from fieldnote.measure.capture import backends
    from fieldnote.registry.subjects import attributes, describe

    if not backends.backend("nsys").available():
        pytest.skip("nsys not available here")
    _, cubin = staged(tmp_path, "gelu", {"rows": 8, "cols": 768}, "gelu_bias_sigmoid_vec4")
    implementations = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                       "cuda": {"implementation": "cuda", "variant": "gelu_bias_sigmoid_vec4", "cubin": str(cubin)}}
    shapes = [{"rows": 1024, "cols": 768}, {"rows": 16384, "cols": 4096}]
    points, skipped = subjects("gelu", shapes, implementations, SEED)
    job = capture.Job("gelu", points, "", {}, iterations=20, warmup=3, repeats=1)
    kernels = backends.backend("nsys").capture(job, tmp_path).assign(op="gelu", backend="nsys")
    kernels = describe(kernels, attributes("gelu", points))  # as the sweep capture stage writes them
    swept = table(summarize(kernels), {"bandwidth_gbs": 4300, "fp32_tflops": 67, "l2_bytes": 60 * 2**20})
    assert not skipped and len(swept) == 4
    big = swept.set_index(["implementation", "shape"]).loc[("cuda", "16384x4096")]
    assert big["launches"] == 1 and not big["fits_l2"] and big["achieved_gbs"] > 1000


def test_a_sweep_window_holds_one_point_s_inputs_on_the_gpu_at_a_time(tmp_path):
    """Two points of one size measured in one window peak at about one point's memory, not two (trimul's six
    points held at once took 42 GiB of an H100's 79, 2026-12-07)."""
    from contextlib import nullcontext

    import torch

    from fieldnote.evidence.sweep import subjects
    from fieldnote.measure import capture
    from fieldnote.measure.capture import run
    from fieldnote.measure.verified import forget_truths

    _, cubin = staged(tmp_path, "gelu", {"rows": 8, "cols": 768}, "gelu_bias_sigmoid_vec4")
    implementations = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                       "cuda": {"implementation": "cuda", "variant": "gelu_bias_sigmoid_vec4", "cubin": str(cubin)}}

    def peak(shapes):
        points, _ = subjects("gelu", shapes, implementations, SEED)
        job = capture.Job("gelu", points, "", {}, iterations=3, warmup=2, repeats=1, tolerance=TOL)
        forget_truths()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        run.measured_window(job, lambda: None, lambda: None, lambda name: nullcontext())
        return torch.cuda.max_memory_allocated() - before

    one = peak([{"rows": 16384, "cols": 4096}])
    two = peak([{"rows": 16384, "cols": 4096}, {"rows": 16385, "cols": 4096}])
    assert one > 2 * 16384 * 4096 * 4 and two < 1.3 * one, (one, two)  # x and an output at least


def test_counters_at_the_sweep_points_a_target_names(tmp_path):
    """The sweep_counters stage's profiling: each point alone under Nsight Compute, inputs drawn at its shape,
    every metric back, the GPU it ran on recorded."""
    from fieldnote.evidence.sweep import subjects, target_points
    from fieldnote.measure.capture import ncu
    from fieldnote.measure.capture.ncu import counters_at

    if not ncu.available():
        pytest.skip("ncu not available here")
    _, cubin = staged(tmp_path, "gelu", {"rows": 8, "cols": 768}, "gelu_bias_sigmoid_vec4")
    implementations = {"torch": {"implementation": "torch", "variant": None, "cubin": None},
                       "cuda": {"implementation": "cuda", "variant": "gelu_bias_sigmoid_vec4", "cubin": str(cubin)}}
    points, _ = subjects("gelu", [{"rows": 1024, "cols": 768}, {"rows": 4099, "cols": 770}], implementations, SEED)
    named = target_points("gelu", points, {"points": [{"op": "gelu", "shape": "4099x770", "versus": "torch",
                                                       "at_most": 1.0}]})
    table = counters_at("gelu", named, {"iterations": 10, "warmup": 3}, TOL, "test", tmp_path / "work")
    assert set(table["subject"]) == {"cuda@4099x770", "torch@4099x770"}
    assert set(table["name"]) == set(ncu.METRICS.values()) and table["gpu_uuid"].notna().all()


def test_what_inductor_generated_is_read_and_stable_across_compiles():
    """Issue 17: the compiled peer's choice as evidence: the generated source's hash and its Triton kernels, the same
    on a second compile (the cache answering)."""
    from fieldnote.measure.implementations import inductor_choice

    arrays = OPS["gelu"].inputs({"rows": 256, "cols": 768}, SEED)
    first, again = inductor_choice("gelu", arrays, "cuda"), inductor_choice("gelu", arrays, "cuda")
    assert first == again and len(first["generated_sha256"]) == 64
    assert first["generated_kernels"].startswith("triton_"), first


def test_the_same_choice_made_in_two_caches_hashes_alike(tmp_path):
    """The generated source names each kernel's file in the cache; its hash must not: the GELU (no choice to make)
    compiled in two empty caches, a process each, gives one hash."""
    import os
    import subprocess
    import sys

    probe = ("import json; from fieldnote.registry.ops import OPS; "
             "from fieldnote.measure.implementations import inductor_choice; "
             f"print(json.dumps(inductor_choice('gelu', OPS['gelu'].inputs({{'rows': 256, 'cols': 768}}, {SEED}), "
             "'cuda')))")
    hashes = set()
    for name in ("one", "two"):
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / name)}
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
        hashes.add(out.stdout.strip().splitlines()[-1])
    assert len(hashes) == 1, hashes


def test_the_queued_clock_leaves_the_host_out_and_the_event_clock_does_not():
    """Issue 41: the tunes are ranked on timing.QueuedClock. A call whose host side takes 1 ms before a kernel of a
    few microseconds (the spin lasts about 2): the event clock's span holds the 1 ms, the queued clock's does not."""
    import time

    import torch

    from fieldnote.measure import timing
    x = torch.ones(1 << 16, device="cuda")

    def call():
        time.sleep(0.001)
        x.add_(1.0)

    spans = [timing.EventClock().time_us(call) for _ in range(5)]
    queued = [timing.QueuedClock().time_us(call) for _ in range(5)]
    assert min(spans) > 1000 and max(queued) < 200, (spans, queued)


def test_the_queued_clock_refuses_a_call_that_waits_for_the_gpu():
    """A call that synchronizes reaches the start event before it is enqueued whatever the spin: its span would hold
    the host's time, so the clock says so instead of returning it."""
    import torch

    from fieldnote.measure import timing
    x = torch.ones(1 << 16, device="cuda")
    with pytest.raises(RuntimeError, match="synchronizes with the GPU"):
        timing.QueuedClock().time_us(lambda: x.add_(1.0).sum().item())


def test_tunes_in_fresh_caches_keep_the_fastest_and_a_later_process_compiles_its_choice(tmp_path, monkeypatch):
    """Issue 41: torch.compile tuned in two empty caches, a process each, timed on fresh verified inputs; a later
    process pointed at the kept cache (as script.py points every compiled job) generates the kept tune's source."""
    import json
    import subprocess
    import sys

    from fieldnote.measure import tune
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "unused"))  # restored after; use_kept sets it
    shape = {"m": 256, "n": 256, "k": 256}
    npz = tmp_path / "inputs.npz"
    inputs.write("matmul", shape, SEED, str(npz), str(tmp_path / "hashes.json"))
    request = {"op": "matmul", "shape": shape, "label": OPS["matmul"].label(shape), "npz": str(npz),
               "tolerance": TOL, "iterations": 20, "warmup": 5}
    table = tune.tunes(request, tmp_path / "caches", 2)
    assert list(table["tune"]) == [1, 2] and table["kept"].sum() == 1 and (table["gpu_us"] > 0).all()
    tunes = tmp_path / "tunes.parquet"
    table.to_parquet(tunes)
    tune.use_kept(tunes)
    probe = ("import json, sys; from fieldnote.measure import inputs; "
             "from fieldnote.measure.implementations import inductor_choice; "
             f"print(json.dumps(inductor_choice('matmul', inputs.read({str(npz)!r}), 'cuda')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    choice = json.loads(out.stdout.strip().splitlines()[-1])
    tune.kept_choice(tunes, choice, "matmul / compiled")  # raises where the cache did not answer


def test_a_job_pinned_to_its_gpu_records_that_gpu_and_reads_its_clocks():
    """The one-GPU run of the several-GPU code path (devices.py): a job holding slot 0 is pinned to the first
    visible GPU, and what it records (gpu.identity, NVML's state) is that GPU's, found by UUID."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, os; from fieldnote.measure import devices, gpu; pinned = devices.pin({'gpu_share_0': 1}); "
            "print(json.dumps({'pinned': pinned, 'visible': os.environ['CUDA_VISIBLE_DEVICES'], "
            "**gpu.identity(), 'clock': gpu.State()().get('sm_clock_mhz')}))")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    import pynvml

    pynvml.nvmlInit()
    first = pynvml.nvmlDeviceGetHandleByIndex(0)
    assert seen["pinned"] == seen["visible"] == "0"
    assert seen["gpu_uuid"] == pynvml.nvmlDeviceGetUUID(first) and seen["gpu_index"] == 0
    assert seen["gpu_name"] == pynvml.nvmlDeviceGetName(first) and seen["clock"] > 0


@pytest.mark.parametrize("threads, workers", [(None, False), ("4", True)])
def test_a_compile_starts_no_compile_workers(tmp_path, threads, workers):
    """On the GPU inductor compiles Triton, in its worker pool when it has one: none (implementations.compiled), unless
    the user sets TORCHINDUCTOR_COMPILE_THREADS (the second case: the test sees the workers where they start)."""
    from test_check import compiled_gelu

    assert (compiled_gelu(tmp_path, "cuda", threads)["workers"] > 0) == workers
