# Shared wiring: the resolved namespaces and the input functions every stage uses. Logic lives in src/fieldnote.
import os
import sys
from pathlib import Path

SRC = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SRC)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path("work/inductor-cache").resolve()))  # compile once
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default since 2.x; silences 3.9's warning

from fieldnote.archive import Archive, source_files
from fieldnote.config import Namespace, load_namespaces, validate
from fieldnote.errors import PipelineError
from fieldnote.gpu import STOP_MESSAGE
from fieldnote.ops import OPS

try:
    validate(config, "config.schema.yaml", Path("config/config.yaml"))
    NAMESPACES = load_namespaces(Path("config"), config)
    # Namespaces whose evidence comes from an archive: the one `--config replay=PATH` names, and every
    # namespace marked `archived: PATH`. Each archive is checked against its manifest before any job, and the
    # namespace becomes the one the archive recorded (its targets apart).
    ARCHIVES = {}
    for path in [n.archived for n in NAMESPACES.values() if n.archived] + [config.get("replay")]:
        if path:
            archive = Archive(path)
            archive.verify()
            ARCHIVES[archive.namespace] = archive
            archived = NAMESPACES.get(archive.namespace)
            resolved = archive.resolved()
            if archived:  # the targets are the reading of the evidence: the namespace file's, not the archive's
                resolved["targets"] = archived.targets
            NAMESPACES[archive.namespace] = Namespace.from_dict(
                resolved, replay=path, archived=archived.archived if archived else None)
except PipelineError as error:
    sys.exit(f"fieldnote: {error}")

GPU_SLOTS = 4  # the `gpu` resource of profiles/default: a measurement takes all of it, a check one slot
# The order of GPU jobs. Snakemake starts the set of ready jobs with the largest summed priority, so a job that takes
# the whole GPU must outrank GPU_SLOTS one-slot jobs. The compiled checks (autotuning alone) come first, then the
# other checks, then the sweep checks side by side; were an op's sweep check to start as soon as that op's compiled
# check ends, the next compiled check would wait for it, and the long sweep checks would run one at a time. The
# sweep checks take PRIORITY_SWEEP_CHECK and up, one more for each op ahead of them (sweep.smk).
PRIORITY_COMPILED_CHECK, PRIORITY_CHECK, PRIORITY_SWEEP_CHECK = 50, 10, 1
CPU_IMPLEMENTATIONS = ("torch", "triton")  # cuda needs the GPU; compiled emits C++ on a CPU, not its GPU code


wildcard_constraints:
    ns="[A-Za-z0-9_.-]+(?<!\\.tar\\.gz)",  # results/<ns>.tar.gz is the archive of results/<ns>
    op="|".join(OPS),
    impl="torch|triton|compiled|cuda",
    arch="sm_[0-9]+a?",
    variant="[A-Za-z0-9_]+",


def module(*names):
    """Package modules a stage runs: editing one reruns that stage and what derives from it."""
    return [f"src/fieldnote/{n}.py" for n in names]


def ns_of(wildcards):
    return NAMESPACES[wildcards.ns]


def input_files(ns, op):
    from fieldnote.inputs import path_for

    npz = path_for(op, ns.shapes[op], ns.seed)
    return {"npz": npz, "hashes": npz.replace(".npz", ".sha256.json")}


def cubin_of(ns, op, variant=None):
    return f"work/build/{ns.arch}/cuda/{op}/{variant or ns.variants[op]}.cubin"


def subjects_of(ns, op, names=None):
    """The measured subjects of an op (implementations, then attempts' variants), each with the cubin it runs."""
    return {name: {**s, "cubin": cubin_of(ns, op, s["variant"]) if s["variant"] else None}
            for name, s in ns.subjects(op).items() if names is None or name in names}


def triton_sources(op):
    """The Triton kernel file of an op, and the file whose kernel it shares (triangle uses matmul's)."""
    return [f"kernels/triton/{op}.py"] + (["kernels/triton/matmul.py"] if op == "triangle" else [])


IMPORTED_TABLES = ("spans", "checks", "kernels")
DERIVED_TABLES = ("summary", "attempts", "sweep")  # recomputed from the other tables, in a replay too


def evidence_table(ns, name):
    """Where a namespace's table is: a replayed namespace reads every table but the derived ones from its archive,
    an imported one reads spans, checks and kernels from the original evidence."""
    if NAMESPACES[ns].replay and name not in DERIVED_TABLES:
        return f"work/{ns}/replay/{name}.parquet"
    if NAMESPACES[ns].imported and name in IMPORTED_TABLES:
        return f"work/{ns}/original/{name}.parquet"
    return f"work/{ns}/{name}.parquet"


def environment_file(ns):
    if NAMESPACES[ns].replay:
        return f"work/{ns}/replay/environment.json"
    return f"work/{ns}/original/environment.json" if NAMESPACES[ns].imported else f"work/{ns}/gpu.json"


def bundle_tables(ns):
    measured = ("checks", "resources", "census", "spans", "gpu_state", "kernels", "capture_summary", "summary")
    imported = (*IMPORTED_TABLES, "capture_summary", "summary")
    if NAMESPACES[ns].replay:
        names = ARCHIVES[ns].tables()
    elif NAMESPACES[ns].imported:
        names = imported
    else:
        names = (measured + (("counters",) if NAMESPACES[ns].capture["ncu"] else ())
                 + (("attempts",) if NAMESPACES[ns].attempts else ())
                 + (("sweep_checks", "sweep_kernels", "sweep") if NAMESPACES[ns].sweep else ()))
    return {name: evidence_table(ns, name) for name in names}


def history_files(ns):
    """Other namespaces' tables this namespace's note and figures draw on, by their name inside the bundle
    (evidence/history/...). A replay reads them from the archive, so it never needs those namespaces."""
    n = NAMESPACES[ns]
    names = {}
    for other in (n.progression or {}).get("namespaces", []):
        names[f"history/{other}.summary.parquet"] = f"work/{other}/summary.parquet"
    if n.drift:
        base = n.drift["baseline"]
        names[f"history/{base}.summary.parquet"] = f"work/{base}/summary.parquet"
        names[f"history/{base}.kernels.parquet"] = evidence_table(base, "kernels")
    if n.replay:
        return {name: f"work/{ns}/replay/{name}" for name in names}
    return names
