# Shared wiring: the resolved namespaces and the input functions every stage uses. Logic lives in src/fieldnote.
import os
import re
import sys
from pathlib import Path

SRC = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SRC)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path("work/inductor-cache").resolve()))  # compile once
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default since 2.x; silences 3.9's warning

from fieldnote import names
from fieldnote.archive import Archive, provenance, resolve_archived, source_files
from fieldnote.bundle import stale_if_incomplete
from fieldnote.config import Namespace, check_config, load_namespaces
from fieldnote.errors import PipelineError
from fieldnote.gpu import STOP_MESSAGE
from fieldnote.io import remove_leftovers
from fieldnote.ops import OPS

try:
    check_config(config, Path("config/config.yaml"))
    NAMESPACES = load_namespaces(Path("config"), config)
    # Namespaces whose evidence comes from an archive (every `archived:` one, pinned by its SHA-256, and the one
    # `--config replay=PATH` names) become the namespace the archive recorded, verified before any job runs. An
    # archived namespace whose archive cannot be used is BROKEN: asking for it fails, and only it.
    ARCHIVES, BROKEN = resolve_archived(NAMESPACES, config.get("replay"))
except PipelineError as error:
    sys.exit(f"fieldnote: {error}")
for _ns, _why in BROKEN.items():
    print(f"fieldnote: warning: results/{_ns} cannot be rebuilt: {_why}", file=sys.stderr)
for _ns in [*NAMESPACES, *BROKEN]:
    stale_if_incomplete(Path("results") / _ns)  # an empty or damaged bundle is never taken as up to date

GPU_SLOTS = 4  # the `gpu` resource of profiles/default: a measurement takes all of it, a check one slot
# The order of GPU jobs. Snakemake starts the set of ready jobs with the largest summed priority, so a job that takes
# the whole GPU must outrank GPU_SLOTS one-slot jobs. The compiled checks (autotuning alone) come first, then the
# other checks, then the sweep checks side by side; were an op's sweep check to start as soon as that op's compiled
# check ends, the next compiled check would wait for it, and the long sweep checks would run one at a time. The
# sweep checks take PRIORITY_SWEEP_CHECK and up, one more for each op ahead of them (sweep.smk).
PRIORITY_COMPILED_CHECK, PRIORITY_CHECK, PRIORITY_SWEEP_CHECK = 50, 10, 1
CPU_IMPLEMENTATIONS = ("torch", "triton")  # cuda needs the GPU; compiled emits C++ on a CPU, not its GPU code


wildcard_constraints:
    # a valid name (no dots: results/<ns>.tar.gz is the archive of results/<ns>), and none whose archive is broken
    ns="".join(f"(?!{re.escape(n)}(?![A-Za-z0-9_-]))" for n in BROKEN) + names.pattern(),
    op="|".join(OPS),
    impl="torch|triton|compiled|cuda",
    arch="sm_[0-9]+a?",
    variant="[A-Za-z0-9_]+",


def module(*names):
    """Package modules a stage runs: editing one reruns that stage and what derives from it."""
    return [f"src/fieldnote/{n}.py" for n in names]


def ns_of(wildcards):
    return NAMESPACES[wildcards.ns]


def archived_of(wildcards):
    """The archive an archived or replayed namespace's evidence lives in: its GPU jobs refuse to run (script.py)."""
    n = NAMESPACES[wildcards.ns]
    return n.archived or n.replay


def check_outputs(rules):
    """Every path a rule writes lies inside results/ or work/ (wildcards are single names), checked before any job."""
    try:
        for rule in rules:
            for path in rule.output:
                names.check_written(re.sub(r"{[^}]*}", "x", str(path)), f"rule {rule.name}", Path.cwd())
    except PipelineError as error:
        sys.exit(f"fieldnote: {error}")


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
    if ns in BROKEN:  # asked for by another namespace's drift: the refusal of archive.smk
        return f"work/{ns}/replay/{name}.parquet"
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
