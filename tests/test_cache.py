"""Warm and cold L2 captures side by side: cold calls in their own NVTX ranges, labelled by `cache`, summarized
apart, and the summary's kernel time stays the warm one with the cold one beside it."""
import pandas as pd

from fieldnote.evidence.measurements import control_band, summary
from fieldnote.evidence.summary import summarize
from fieldnote.measure.capture import Job, label
from fieldnote.registry.subjects import attributes, describe, range_name

SHAPE = {"rows": 4096, "cols": 768}


def kernels(job: Job) -> pd.DataFrame:
    """One kernel per call, as a backend reports them: the range and its occurrence, warm 5 µs and cold 9 µs."""
    rows = []
    for cache in job.caches:
        for impl in job.subjects_named:
            for k in range(job.repeats * job.iterations):
                rows.append({"op": job.op, "backend": "nsys", "kernel": f"{impl}_kernel", "launch": len(rows),
                             "range": job.range_of(impl, cache), "iteration": k,
                             "duration_us": 9.0 if cache == "cold" else 5.0})
    return pd.DataFrame(rows)


def test_cold_calls_have_ranges_of_their_own():
    assert range_name("gelu", "cuda") == "gelu:cuda" and range_name("gelu", "cuda", "cold") == "gelu:cuda:cold"


def test_warm_and_cold_are_summarized_apart():
    subjects = {"cuda": {"implementation": "cuda", "variant": "gelu_bias_tanh"},
                "torch": {"implementation": "torch", "variant": None}}
    job = Job("gelu", subjects, "", {}, iterations=4, warmup=0, repeats=3, caches=("warm", "cold"))
    described = attributes("gelu", subjects, SHAPE)
    labelled = describe(label(kernels(job), job), described)
    assert set(labelled["cache"]) == {"warm", "cold"} and labelled["subject"].notna().all()
    per_capture = control_band(summarize(labelled), 0.05)
    assert len(per_capture) == 2 * 2 * 3 and not per_capture["under_load"].any()
    spans = describe(pd.DataFrame({"op": "gelu", "subject": ["cuda", "torch"], "mode": "eager", "round": 0,
                                   "span_us": [7.0, 8.0]}), described)
    table = summary(per_capture, spans, labelled).set_index("subject")
    assert table.loc["cuda", "variant"] == "gelu_bias_tanh" and table.loc["cuda", "shape"] == "4096x768"
    assert table.loc["cuda", "kernel_us"] == 5.0 and table.loc["cuda", "kernel_cold_us"] == 9.0
    assert table.loc["cuda", "kernel_low_us"] == table.loc["cuda", "kernel_high_us"] == 5.0


def test_a_warm_only_job_keeps_its_tables_as_they_were():
    job = Job("gelu", {"cuda": {}}, "", {}, iterations=4, warmup=0)
    assert "cache" not in label(kernels(job), job)
    assert Job.from_dict(job.to_dict()).caches == ("warm",)
