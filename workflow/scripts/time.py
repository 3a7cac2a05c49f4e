"""Spans of every subject of one op (implementations and attempts): eager, one event pair per call, and CUDA-graph
replay."""
from fieldnote.core.io import write_table
from fieldnote.core.progress import PREPARE, phase
from fieldnote.measure import gpu
from fieldnote.registry.subjects import attributes, describe
from fieldnote.script import entry

from functools import partial

import pandas as pd


@entry
def main(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    gpu.require(f"time ({w.op})", f"results/{w.ns}")
    with phase(PREPARE):
        from fieldnote.measure import gpulock, sanitize, timing, workload
        from fieldnote.registry.ops import OPS

        subjects = sanitize.gate(snakemake, p.subjects, f"{w.ns}: {w.op}")
    t, shape = p.timing, OPS[w.op].label(p.op["shape"])
    # inputs uploaded, kernels loaded, compiled or JIT-ed beside other jobs' GPU work, a subject at a time
    calls = workload.prepared_each({name: partial(workload.prepare, w.op, s["implementation"], snakemake.input.npz,
                                                  p.op["shape"], s["variant"], s["cubin"], p.op["tolerance"],
                                                  f"{w.ns}: {w.op} / {name} at {shape}")
                                    for name, s in subjects.items()},
                                   {name: s["implementation"] for name, s in subjects.items()})
    state = gpu.State()
    with gpulock.exclusive():  # warm-up and every timed call with the GPU to itself
        eager, states = timing.spans(calls, t["rounds"], t["iterations"], t["warmup"], timing.EventClock(), state)
        graph = timing.graph_spans(calls, t["rounds"], t["iterations"], t["warmup"], t["graph_replays"], state)
    workload.checksummed(calls)
    described = attributes(w.op, subjects, p.op["shape"])
    spans, states = pd.DataFrame(eager + graph), pd.DataFrame(states).assign(**gpu.identity())
    spans.insert(0, "op", w.op)
    states.insert(0, "op", w.op)
    write_table(snakemake.output.state, describe(states, described))
    write_table(snakemake.output.spans, describe(spans, described))


main(snakemake)  # noqa: F821
