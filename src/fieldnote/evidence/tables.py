"""The evidence tables: one registry of every table a bundle can hold, what a row is, and each column's unit and
meaning. docs/reference.md's table reference is generated from it (fieldnote.publish.docs), the workflow reads
which tables are recomputed in a replay and which an import brings from it, and a test holds every column of the
shipped evidence to it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    names: tuple[str, ...]  # columns documented together
    unit: str
    meaning: str


@dataclass(frozen=True)
class Table:
    name: str
    row: str  # what one row is
    columns: tuple[Column, ...]
    derived: bool = False  # recomputed from the other tables, in a replay too
    imported: bool = False  # what importing the original project's evidence brings

    @property
    def column_names(self) -> set[str]:
        return {n for c in self.columns for n in c.names}


def c(names: str, unit: str, meaning: str) -> Column:
    return Column(tuple(names.split()), unit, meaning)


NS = c("namespace", "", "the namespace the row belongs to")
GPU = c("gpu_index gpu_uuid gpu_name", "", "the GPU it ran on: its index on the host as NVML numbers it, its UUID "
                                          "and its name (gpu.identity; absent from the archives shipped up to "
                                          "2026-12-01)")
SESSION_CLOCKS = c("session_sm_clock_mhz session_memory_clock_mhz", "MHz", "NVML, on that GPU, at the end of the "
                                                                         "profiled session")
SUBJECT = c("op subject", "", "the op, and the subject as jobs, files and NVTX ranges name it (subjects.py): an "
                              "implementation of the namespace, an attempt's variant, `impl@shape` in the sweep")
WHAT = "the implementation (a peer, or a hand-written kernel's toolchain) and the variant it runs (a peer's own name)"
DESCRIBED = c("implementation variant shape", "", WHAT + "; the shape it ran at (`1024x1024x1024` is m x n x k)")
SUBJECTS = (SUBJECT, DESCRIBED)
INTERVAL = c("kernel_low_us kernel_high_us", "µs", "the kernel time's noise: a percentile bootstrap of the median over "
                                                   "captures (95 %, 2000 resamples, fixed seed), widened to the "
                                                   "captures' range")
CHECK_COLUMNS = (
    NS, SUBJECT, c("implementation variant", "", WHAT),
    c("shape case seed", "", "the case's shape label (`1024x1024x1024` is m x n x k), its name, the inputs' seed"),
    c("device", "", "`cuda`, `cpu` or `triton-interpreter`"),
    c("passed", "bool", "every element finite and `abs(out - ref) <= atol + rtol * abs(ref)`"),
    c("max_abs_error", "", "max over elements of `abs(out - ref)`"),
    c("max_rel_error", "", "max of `abs(out - ref) / abs(ref)` over elements with `abs(ref) > atol`"),
    c("worst_tolerance_ratio", "", "max of `abs(out - ref) / (atol + rtol * abs(ref))`; passing needs <= 1"),
    c("nonfinite_elements checked_elements", "count", "NaN/inf left in the output (an unwritten element stays NaN); "
                                                      "elements compared"),
    c("rtol atol", "", "the tolerance applied"),
    c("gpu_alone", "bool", "the check's timings had the GPU to themselves (torch.compile's autotuning at a "
                           "measured shape: the full, fresh and sweep cases, gpulock.alone; at every case until "
                           "2026-12-02, and its whole compile before that); absent from the archives shipped up to "
                           "2026-12-01"),
)
KERNEL_COLUMNS = (
    NS, *SUBJECTS, c("backend backend_version", "", "the profiler (nsys, cupti, ncu) and its version"),
    c("capture iteration iterations", "", "repeat index; call index within it; calls per capture"),
    c("kernel", "", "demangled name"), c("launch", "", "order in the session"),
    c("range", "", "its NVTX range (`op:subject`, `:cold` for a call after an L2 flush, `op:ceiling-<config>` "
                   "for the memory ceiling's copy or the compute floor's probe)"),
    c("cache", "", "`warm` or `cold` (where the namespace captures both)"),
    c("start_ns duration_us", "ns, µs", "start on the GPU's clock; duration"),
    c("grid block", "", "launch shape, `x,y,z`"), c("registers", "per thread", "as the profiler reports"),
    c("static_shared_bytes dynamic_shared_bytes shared_bytes", "bytes", "shared memory, declared, requested at "
                                                                        "launch, and both"),
    GPU, SESSION_CLOCKS,
)
# The calls of each subject Nsight Compute profiles, every kernel of each (measure.capture.ncu): a counters table
# has each kernel's launches of that many calls (archives before 2026-12-07 have a subject's first five launches).
PROFILED_CALLS = 5
COUNTER_COLUMNS = (
    NS, *SUBJECTS, c("backend backend_version kernel launch", "", "as in kernels"),
    c("metric name value unit", "", "ncu's metric name, its short name, the value in ncu's base unit"),
    GPU, SESSION_CLOCKS,
)
PTX_WIDTHS = " ".join(f"{kind}{w}" for kind in ("global_loads", "global_stores", "async_copies")
                      for w in ("", "_32bit", "_64bit", "_128bit"))

REGISTRY = (
    Table("checks", "op, implementation, case", CHECK_COLUMNS + (
        c("generated_sha256 generated_kernels", "", "for torch.compile: the SHA-256 of the source Inductor "
                                                    "generated at the namespace's shape, and its Triton kernels"),),
          imported=True),
    Table("sweep_checks", "case of the gate at a sweep point (subject `impl@shape`)", CHECK_COLUMNS),
    Table("resources", "CUDA variant of the namespace (ptxas `-v`, `cuobjdump --dump-resource-usage`)", (
        NS, c("op variant entry arch design", "", "the kernel and its design in words"),
        c("registers cuobjdump_registers", "per thread", "ptxas's and cuobjdump's count (must agree)"),
        c("spill_stores_bytes spill_loads_bytes stack_bytes", "bytes", "local-memory traffic ptxas reports"),
        c("static_shared_bytes", "bytes", "`__shared__` the kernel declares"),
        c("cubin_shared_bytes", "bytes", "cuobjdump's SHARED (includes sm_90's 1 KiB reserved per block)"),
        c("barriers", "count", "named barriers ptxas reports"),
        c(" ".join(f"ptx_{n}" for n in PTX_WIDTHS.split()), "instructions", "in the PTX, by access width"),
        c("ptx_barriers", "instructions", "`bar.sync` / `barrier.sync` in the PTX"),
        c("toolchain compiler", "", "the toolchain that built it (toolchains.py) and its compiler, `NVRTC 13.0`, "
                                    "`nvJitLink 13.0`; evidence built before the toolchain registry has "
                                    "`nvrtc_version` instead"),
        c("source_sha256 headers cubin_sha256 options nvrtc_version ptxas_log", "",
          "what was built and how; `headers`: each family header it includes, `name:sha256`"),
    )),
    Table("census", "Triton kernel of the namespace, compiled offline", (
        NS, c("op kernel arch num_warps constexprs", "", "the kernel and its launch parameters"),
        c("registers", "per thread", "cuobjdump"), c("shared_bytes cubin_shared_bytes", "bytes",
                                                   "what a launch requests; cuobjdump's SHARED"),
        c(PTX_WIDTHS + " barriers", "instructions", "counted in the PTX, by access width"),
        c("triton_version cubin_sha256", "", "what was built"),
    )),
    Table("inputs", "op input", (c("op shape seed input sha256", "", "each input array and its SHA-256"),)),
    Table("spans", "timed call", (
        NS, *SUBJECTS, c("mode", "", "`eager`: one event pair around one call; `graph`: one replay of its captured "
                                   "calls (`iterations`, fewer where their buffers would pass 2 GiB) divided by "
                                   "their number"),
        c("round position iteration", "", "round; place in that round's order; call (or replay) index"),
        c("span_us", "µs", "CUDA-event time around the call"), c("sm_clock_mhz", "MHz", "NVML, after the block"),
        c("verified", "bool", "the call's output was checked against its input set's reference (verified.py)"),
        c("fresh_inputs", "bool", "the call's inputs were drawn afresh before it, a set no call of the process saw "
                                  "(evidence older than 2026-12-04 alternated two sets)"),
    ), imported=True),
    Table("gpu_state", "op, round and subject block of the timing stage", (
        NS, *SUBJECTS, c("round position", "", "as in spans"),
        c("sm_clock_mhz memory_clock_mhz temperature_c power_w utilization_gpu_pct", "MHz, °C, W, %", "NVML"),
        c("throttle_reasons throttle_names", "", "NVML's bitmask and its names"), GPU,
    )),
    Table("kernels", "captured kernel", KERNEL_COLUMNS, imported=True),
    Table("sweep_kernels", "captured kernel of a sweep point (subject `impl@shape`)", KERNEL_COLUMNS),
    Table("capture_summary", "op, subject, backend, capture (and cache)", (
        NS, *SUBJECTS, c("backend capture cache iterations", "", "as in kernels"), GPU,
        c("launches launches_per_iteration", "count", "kernels in the range; per iteration, a whole number or the "
                                                      "stage fails"),
        c("kernel_us_per_iteration", "µs", "sum of kernel durations / iterations, gaps excluded"),
        c("kernel_names", "", "the kernels, ` | ` between"),
        c("band_min_us band_max_us band_margin under_load", "µs, fraction, bool",
          "the control band: the other captures' range, `capture.band_margin`, and whether this capture lies "
          "further than the margin outside it (labelled, kept, inside the median)"),
    )),
    Table("summary", "op and implementation of the namespace", (
        NS, c("op implementation variant shape", "", "the op; " + WHAT + "; the op's shape"),
        c("kernel_us", "µs", "median over the captures of the first backend of nsys, cupti (warm)"),
        INTERVAL, c("kernel_cold_us kernel_cold_low_us kernel_cold_high_us", "µs",
                    "the same with L2 flushed before each call, where the namespace captures cold"),
        c("span_mean_us span_median_us", "µs", "eager spans"),
        c("span_round_min_us span_round_max_us", "µs", "the range of the rounds' mean spans"),
        c("launches captures backend", "", "per iteration; captures; the backend the kernel time is from"),
    ), derived=True),
    Table("attempts", "declared attempt, from the same run's values", (
        c("op attempt metric", "", "the op, the attempt's variant, `kernel` (kernel_us) or `span` (span_mean_us)"),
        c("value_us compared_with compared_us ratio", "µs", "its value, what it is compared with and that value, "
                                                            "value / compared"),
        c("low_us high_us", "µs", "the attempt's noise interval in its metric (the summary's: kernel time's "
                                  "bootstrap, the span's range of round means)"),
        c("adopted adopted_us against_adopted", "µs", "the implementation the namespace adopted for the op, its "
                                                      "value, and the attempt against it by their intervals: "
                                                      "below, above or not distinguishable"),
        c("why", "", "why it was not adopted, as the namespace file declares it; empty where it declares nothing"),
        c("refused", "", "why it has no value: the sanitizer's finding, where the gate left it out of the timing; "
                         "empty otherwise; only in a run where the gate left an attempt out"),
    ), derived=True),
    Table("sweep", "op, implementation and shape of the sweep", (
        c("op implementation variant shape", "", "the op; " + WHAT + "; the point"),
        c("kernel_us launches", "µs, count", "as in summary"),
        c("kernel_low_us kernel_high_us captures", "µs, count", "the point's interval, as the summary's, and its "
                                                               "captures (where every point has at least three)"),
        c("bytes flops", "bytes, FLOP", "the least any implementation must move and compute"),
        c("achieved_gbs achieved_tflops", "GB/s, TFLOP/s", "bytes and FLOPs over kernel_us"),
        c("bound fraction_of_roof fits_l2", "", "`memory` or `compute` from the op's intensity against the "
                                                "roofline's ridge; the achieved fraction of that roof; whether the "
                                                "bytes fit L2"),
        c("reason", "", "why a point was left out (a launch contract, a failed check); such rows carry only op, "
                        "implementation, variant, shape and reason"),
    ), derived=True),
    Table("counters", "ncu: kernel launch and metric", COUNTER_COLUMNS),
    Table("sweep_counters", "ncu at a sweep point a target names (subject `impl@shape`): kernel launch and metric",
          COUNTER_COLUMNS),
    Table("sanitizer", "variant, tool and shape (compute-sanitizer in the gate)", (
        NS, c("op variant tool shape", "", "memcheck, racecheck, synccheck or initcheck, at a small, tail or edge "
                                           "shape"),
        c("errors first_message", "count", "errors the tool reported; the first, as printed"),
    )),
    Table("ceilings", "op, cache and configuration of the memory ceiling's copy or the compute floor's probe", (
        NS, c("op cache config", "", "the op whose floor it measures, `warm` or `cold`, the configuration (a "
                                     "copy's launch, or a probe's: `cublas_tf32_8192`, `fma_resident`, ...)"),
        c("kind unit", "", "`memory` (a copy of the op's traffic) or `compute` (a probe of the unit the op's "
                           "precision contract computes on, ops.base.Precision); the probe's unit, `tf32_tensor` "
                           "or `fp32_fma`, empty for a copy; absent before the compute floor (copies alone)"),
        c("bytes_read bytes_written", "bytes", "the op's least traffic: its output written, the rest read"),
        c("kernel_us kernel_low_us kernel_high_us", "µs", "the copy's or the probe's kernel time and interval, as "
                                                          "summary's"),
        c("gbs", "GB/s", "(read + written) / kernel_us; empty for a probe"),
        c("flops tflops", "FLOP, TFLOP/s", "a probe's FLOPs a call (an FMA is two; 2 n^3 for cuBLAS's n x n "
                                           "product, FMA chains counted from the threads captured) and its rate, "
                                           "flops / kernel_us; empty for a copy"),
        c("unit_flops", "FLOP", "the op's FLOPs at its shape (Op.work) times its contract's unit FLOPs each: 3 for "
                                "3xTF32; empty for a copy"),
        c("floor_us floor_low_us floor_high_us", "µs", "the floor it sets for the op at its shape, with its interval: "
                                                       "a copy's own kernel time, a probe's unit_flops at its rate "
                                                       "(kernel time scaled by unit_flops / flops)"),
        c("captures backend", "", "as in summary"),
        c("best", "bool", "the lowest floor of its op, cache and kind (before the compute floor: the fastest "
                          "copy): the floor the note judges by"),
    )),
    Table("compiled_tunes", "op and tune of torch.compile at the seed shape, each in a fresh cache (tune.py)", (
        NS, c("op shape tune cache", "", "the op, its seed shape, the tune's number and its inductor cache"),
        c("generated_sha256 generated_kernels", "", "as in checks: what Inductor generated in that cache"),
        c("gpu_us gpu_min_us calls", "µs, µs, count", "the median and least GPU time of its timed calls (CUDA "
                                                       "events queued behind a spin of the GPU, so no host launch "
                                                       "time), each on fresh inputs and verified, and their number"),
        c("kept", "bool", "the fastest tune: the cache every other compiled job of the op compiles from"),
    )),
    Table("known_peers", "op, shape, L2 state and peer at its fastest in a pinned archive on this GPU model "
          "(peers.py)", (
        NS, c("op shape cache implementation", "", "where a verdict is made: a seed shape or a sweep point, `warm` "
                                                   "or `cold`, and the peer"),
        c("kernel_us kernel_low_us kernel_high_us", "µs", "its fastest kernel time there in those archives, and its "
                                                          "interval, as summary's"),
        c("source source_sha256 gpu_name", "", "the namespace and archive it came from, and the GPU both ran on"),
    )),
    Table("claims", "claim or verdict of the note", (
        NS, c("kind claim relation verdict holds", "", "`claim` or `branch` (a template's, two intervals compared), "
                                                      "`target` or `prediction` (a row of that generated table, "
                                                      "judged on the unrounded value); its text; `<`, `>` or `~`, "
                                                      "`<=` or `>=` (at most or at least a target), `in` (a predicted "
                                                      "range); the outcome (`below`, ..., `met`, `missed`, `not "
                                                      "measured`, `held`, ...); whether it holds (a claim borne out, "
                                                      "a target met, a prediction held)"),
        c("left right left_value right_value left_low left_high right_low right_high", "",
          "what was compared: each side's name, value and interval (a target's value is a point; its right side is "
          "the target, or the predicted range)"),
        c("margin", "", "for a claim, how far apart the intervals are, negative when they overlap; for a target or a "
                        "prediction, how far the unrounded value lies inside the target or the range (to its nearer "
                        "bound), in the value's unit, negative past it"),
        c("relative_margin", "fraction", "a target's or prediction's margin as a fraction of the target or of the "
                                         "nearer bound (a target's miss in the note is its negation); empty for a "
                                         "claim"),
        c("key", "", "where the namespace sets it: `targets.best_peer_ratio`, `targets.points.0`, `predictions.3`; "
                     "empty for a claim"),
        c("file line", "", "where in the template (a generated note: the namespace file, line 0)"),
    ), derived=True),
    Table("verdicts", "judgment the note states beside a number, made before any word of it (verdicts.py)", (
        NS, c("kind", "", "`standing` (ours against the fastest peer at the seed shape, each peer at its best known), "
                          "`roofline` (against the roofline's least time there), `sweep` (against the fastest peer "
                          "at a sweep point), `floor` (a kernel time against a floor measured beside it), "
                          "`progression` and `drift` (ours against another namespace's hand-written kernel: the "
                          "stage before, or the drift baseline where the kernel is unchanged), `target` or "
                          "`prediction` (as in claims)"),
        c("op shape cache implementation", "", "where it is made and whose time is judged (a prediction: no op)"),
        c("versus source what", "", "what it is judged against: the peer, `roofline`, `copy` or the probed unit "
                                    "(`tf32_tensor`, `fp32_fma`), the other namespace, or the namespace's key of a "
                                    "target or prediction; where that came from (a peer's best-known namespace, "
                                    "empty for this run; a floor's launch or probe; a progression's later stage); "
                                    "for a target or prediction, the judged value in words"),
        c("value value_low value_high", "µs, or the target's unit", "the judged value and its interval, where it "
                                                                    "has one"),
        c("reference reference_low reference_high", "as value", "what it is judged against, and its interval"),
        c("reference_this_run", "µs", "a peer verdict's fastest peer in this run alone (below it, a best-known time "
                                      "moved the ratio)"),
        c("quotient quotient_low quotient_high", "ratio", "value over reference, and its interval (ours' low over "
                                                          "the peer's high, ours' high over the peer's low)"),
        c("relation verdict holds", "", "a target's or prediction's relation, as in claims; the outcome: `at or "
                                        "under`, `not distinguishable` or `over` 1.00 for a peer verdict (by the "
                                        "interval where there is one, else by the quotient to two places), "
                                        "`within the ceiling` or `not physical` for a floor, `faster`, `slower`, "
                                        "`not distinguishable` or `no interval` (a side without one) across "
                                        "namespaces, as in claims for a target or prediction; whether it holds"),
        c("margin relative_margin", "", "as in claims, for a target or prediction"),
        c("worst", "bool", "a sweep verdict at the op's highest quotient, the point the note names"),
    ), derived=True),
    Table("quoted", "declared quotation", (
        c("key says value unit decimals", "", "what it is, what it says, its value as declared"),
        c("position provenance", "", "its place in the declaration; the source's file and SHA-256"),
    ), imported=True),
)
TABLES = {t.name: t for t in REGISTRY}
# The columns a table may lack; a table read from an archive must have every other column of its entry
# (replay_unpack, plausible.check_required). Computed over every instance of each table in archives/*.tar.gz,
# tests/fixtures/*.parquet and tests/fixtures/pre-subjects-mage-006.tar.gz (read into today's layout, as a replay
# reads it): a column absent from one instance is optional. Added by reading the writers: sweep's `reason` is
# there only where a point was left out. Evidence older than a column (gpu_*, cache, verified, ...) lacks it.
OPTIONAL = {name: frozenset(columns.split()) for name, columns in {
    "checks": "namespace seed max_rel_error worst_tolerance_ratio nonfinite_elements gpu_alone generated_sha256 "
              "generated_kernels",
    "sweep_checks": "gpu_alone",
    "resources": "toolchain compiler headers nvrtc_version",
    "spans": "namespace verified fresh_inputs",
    "gpu_state": "gpu_index gpu_uuid gpu_name",
    "kernels": "namespace cache start_ns static_shared_bytes dynamic_shared_bytes gpu_index gpu_uuid gpu_name "
               "session_sm_clock_mhz session_memory_clock_mhz",
    "sweep_kernels": "cache gpu_index gpu_uuid gpu_name session_sm_clock_mhz session_memory_clock_mhz",
    "capture_summary": "cache gpu_index gpu_uuid gpu_name",
    "summary": "kernel_low_us kernel_high_us kernel_cold_us kernel_cold_low_us kernel_cold_high_us "
               "span_round_min_us span_round_max_us",
    "attempts": "refused low_us high_us adopted adopted_us against_adopted why",  # absent before the verdicts
    "ceilings": "kind unit flops tflops unit_flops floor_us floor_low_us floor_high_us",
    "claims": "key relative_margin",
    "sweep": "reason kernel_low_us kernel_high_us captures",
    "counters": "namespace gpu_index gpu_uuid gpu_name session_sm_clock_mhz session_memory_clock_mhz",
}.items()}
DERIVED = tuple(t.name for t in REGISTRY if t.derived)
IMPORTED = tuple(t.name for t in REGISTRY if t.imported)


def reference() -> str:
    """The table reference of docs/reference.md."""
    parts = []
    for t in REGISTRY:
        flags = [*(["recomputed in a replay"] if t.derived else []), *(["imported"] if t.imported else [])]
        parts += [f"`{t.name}` (one row per {t.row}{'; ' + ', '.join(flags) if flags else ''})", "",
                  "| column | unit | meaning |", "|---|---|---|"]
        parts += [f"| {', '.join(col.names)} | {col.unit} | {col.meaning} |" for col in t.columns]
        parts.append("")
    return "\n".join(parts).rstrip()
