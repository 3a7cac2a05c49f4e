# Shared wiring: the resolved namespaces and the input functions every stage uses. Logic lives in src/fieldnote.
import mimetypes
import os
import re
import sys
from pathlib import Path

SRC = str(Path(workflow.basedir) / "src")
SITE = str(Path(workflow.basedir) / "workflow" / "site")  # sitecustomize.py: a job's Ctrl-C without a traceback
sys.path.insert(0, SRC)
# The jobs import the package from this checkout's src/, whatever else is installed; asserted (and so passed on
# to jobs run elsewhere) by envvars.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SITE, SRC, os.environ.get("PYTHONPATH")) if p)


envvars:
    "PYTHONPATH",


os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path("work/inductor-cache").resolve()))  # compile once
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default since 2.x; silences 3.9's warning

from fieldnote import holdings
from fieldnote.core.errors import STOP_MESSAGE, PipelineError, refusals
from fieldnote.core.io import remove_leftovers
from fieldnote.deps import closure, for_op
from fieldnote.evidence import tables
from fieldnote.evidence.archive import Archive, provenance, resolve_archived, source_files
from fieldnote.evidence.bundle import recover_backup, stale_if_incomplete
from fieldnote.measure import devices
from fieldnote.measure.kernels import cached_sources
from fieldnote.registry import names
from fieldnote.registry.config import Namespace, check_config, load_namespaces, read_when_archived
from fieldnote.registry.ops import OPS
from fieldnote.registry.toolchains import TOOLCHAINS
from fieldnote.registry.vocabulary import CHECKED_ON_CPU, MEASURED

try:
    check_config(config, Path("config/config.yaml"))
    NAMESPACES = load_namespaces(Path("config"), config)
    # Namespaces whose evidence comes from an archive (every `archived:` one, pinned by its SHA-256, and the one
    # `--config replay=PATH` names) become the namespace the archive recorded, verified before any job runs. An
    # archived namespace whose archive cannot be used is BROKEN: asking for it fails, and only it.
    ARCHIVES, BROKEN = resolve_archived(NAMESPACES, config.get("replay"))
    # What `snakemake` with no target rebuilds: the namespaces that need no GPU (archived, or imported from the
    # original project). A namespace still to be measured is asked for by name, on a GPU machine.
    REBUILT = [ns for ns in NAMESPACES if ns in ARCHIVES or NAMESPACES[ns].imported]
    for _ns in [*NAMESPACES, *BROKEN]:
        recover_backup(Path("results") / _ns)  # Snakemake's copy of a bundle a killed run left would stop its rebuild
        stale_if_incomplete(Path("results") / _ns)  # an empty or damaged bundle is never taken as up to date
except PipelineError as error:
    sys.exit(f"fieldnote: {error}")
for _ns, _why in BROKEN.items():
    print(f"fieldnote: warning: results/{_ns} cannot be rebuilt: {_why}", file=sys.stderr)

# The GPUs the GPU jobs spread over, and the slots of each (`gpu_share_<d>`, twelve per GPU in profiles/default):
# every GPU job takes slots of the GPU devices.py gives it (one, more where a GPU has less memory than the slots were
# sized on) and pins itself to that GPU; a measurement's window (and torch.compile's autotuning) takes its GPU alone
# through a lock (gpulock.py), so the rest of a measurement job (process start, imports, preparation, the
# profiler's start and export) runs beside other jobs.
GPUS = devices.count(config)
GPU_VISIBLE = bool(devices.visible())  # NVML shows a GPU, or CUDA_VISIBLE_DEVICES names one
RANK_CHECK, RANK_TIME, RANK_CAPTURE, RANK_COUNTERS, RANK_SWEEP_CHECK, RANK_SWEEP_CAPTURE = 0, 0, 1, 2, 1, 3


def gpu_slot(rank, name_of=None):
    return devices.slots(GPUS, rank, name_of)


# The order of GPU jobs (Snakemake starts the ready jobs of the largest summed priority): the compiled checks, then the
# other checks and compute-sanitizer (they gate the measurements), the sweep captures, the measurements, the sweep
# checks by the chain each starts. Why, and the orders tried: docs/pipeline-time.md, "The order of the GPU jobs".
PRIORITY_COMPILED_CHECK, PRIORITY_CHECK = 50, 30
PRIORITY_SWEEP_CAPTURE, PRIORITY_MEASUREMENT, PRIORITY_SWEEP_CHECK = 21, 20, 1
# the copies and the FMA probe timed beside each op (ceiling.py)
CEILING_SOURCE = ["kernels/ceiling/stream.cu", "kernels/ceiling/fma.cu"]


wildcard_constraints:
    # the namespaces there are (rule unknown_namespace answers any other name), none whose archive is broken
    ns="|".join(map(re.escape, NAMESPACES)) or "(?!)",
    op="|".join(OPS),
    arch="sm_[0-9]+a?",
    variant="[A-Za-z0-9_]+",
    shape="[0-9]+(x[0-9]+)*",  # a shape as ops label it, 1024x768


def code_of(script, op=None):
    """The package modules a rule's script runs, from its imports (deps.py): editing one reruns the rule. A job for
    one op depends on that op's module, not the others'."""
    files = closure(f"workflow/scripts/{script}.py")
    return for_op(files, op) if op else list(files)


def log_of(rule, *wildcards):
    """Each job's log, work/logs/<rule>/<wildcards>.log: what it printed, and a line per subject and phase."""
    return str(Path("work", "logs", rule, *(f"{{{w}}}" for w in wildcards))) + ".log"


def benchmark_of(rule, *wildcards):
    """Each GPU job's benchmark record (wall time, memory), work/benchmarks/<rule>/<wildcards>.tsv."""
    return str(Path("work", "benchmarks", rule, *(f"{{{w}}}" for w in wildcards))) + ".tsv"


def unknown_namespace(wildcards):
    return names.unknown(wildcards.ns, [*NAMESPACES, *BROKEN])


mimetypes.add_type("application/vnd.apache.parquet", ".parquet")  # the report offers a table as a download


def report_category(wildcards):
    """A bundle's file in `snakemake --report` (bundle.smk's patterns): the note, a figure or an evidence table."""
    keys = set(wildcards.keys())
    return "Note" if "page" in keys else "Figures" if "figure" in keys else "Evidence tables"


def ns_of(wildcards):
    return NAMESPACES[wildcards.ns]


def archived_of(wildcards):
    """The archive an archived or replayed namespace's evidence lives in: its GPU jobs refuse to run (script.py)."""
    n = NAMESPACES[wildcards.ns]
    return n.archived or n.replay


def check_outputs(rules):
    """Every path a rule writes lies inside results/ or work/ (wildcards are single names), checked before any job."""
    try:
        for each in rules:
            for path in each.output:
                names.check_written(re.sub(r"{[^}]*}", "x", str(path)), f"rule {each.name}", Path.cwd())
    except PipelineError as error:
        sys.exit(f"fieldnote: {error}")


def input_files(ns, op):
    from fieldnote.measure.inputs import path_for

    npz = path_for(op, ns.shapes[op], ns.seed)
    return {"npz": npz, "hashes": npz.replace(".npz", ".sha256.json")}


def cubin_of(ns, op, variant):
    """Where a hand-written variant's cubin is built: under its toolchain (toolchains.py)."""
    return f"work/build/{ns.arch}/{OPS[op].variant(variant).toolchain}/{op}/{variant}.cubin"


def subjects_of(ns, op, names=None):
    """The measured subjects of an op (implementations, then attempts' variants), each with the cubin it runs."""
    return {
        name: {**s, "cubin": cubin_of(ns, op, s["variant"]) if s["variant"] else None}
        for name, s in ns.subjects(op).items()
        if names is None or name in names
    }


def peer_sources(implementation, op):
    """The kernel files a peer of an op runs: its Triton kernel or library call and the files of its folder they
    import, and the torch reference, which every check computes its float64 reference with."""
    own = cached_sources(implementation, op, Path(workflow.basedir)) if implementation in ("triton", "library") else ()
    return [*own, *cached_sources("torch", op, Path(workflow.basedir))]


IMPORTED_TABLES = tables.IMPORTED  # what importing the original's evidence brings (fieldnote/evidence/tables.py)
DERIVED_TABLES = tables.DERIVED  # recomputed from the other tables, in a replay too


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


def archived_tables(ns):
    """The tables a replayed namespace's archive holds (none for another)."""
    return ARCHIVES[ns].tables() if NAMESPACES[ns].replay else None


def has_table(ns, table):
    """Whether a namespace's evidence has a table (holdings.py decides, for every stage)."""
    return holdings.has(NAMESPACES[ns], table, archived_tables(ns))


def built_tables(ns):
    return holdings.built(NAMESPACES[ns], archived_tables(ns))


def bundle_tables(ns):
    held = holdings.bundle(NAMESPACES[ns], archived_tables(ns))
    return {name: evidence_table(ns, name) for name in held}


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


def history_layouts(ns):
    """The variants and shapes of each namespace whose tables this one's history holds (subjects.migrate)."""
    others = sorted({name.removeprefix("history/").split(".")[0] for name in history_files(ns)})
    return {o: {"variants": NAMESPACES[o].variants, "shapes": NAMESPACES[o].shapes} for o in others if o in NAMESPACES}


# bundle.smk


def all_input_hashes(wildcards):
    ns = ns_of(wildcards)
    return [] if ns.imported or ns.replay else [input_files(ns, op)["hashes"] for op in ns.ops]


def published_config(ns):
    """The configuration a bundle records. A replay publishes the one the archive recorded, targets and all, not
    this pipeline's reading of it, but with the note and predictions its namespace file states
    (config.READ_WHEN_ARCHIVED)."""
    n = NAMESPACES[ns]
    if not n.replay:
        return n.to_dict()
    recorded = set(ARCHIVES[ns].resolved())
    resolved = read_when_archived(ARCHIVES[ns].resolved(), n)
    for key in ("note", "predictions"):  # absent from older archives, and absent where none is stated
        if resolved[key] in (None, []) and key not in recorded:
            del resolved[key]
    return resolved


# build.smk


def family_headers(wildcards):
    """The headers (kernels/cuda/include) a variant's source includes, as paths relative to the workflow."""
    from fieldnote.measure.build.cuda import headers

    source = Path(f"kernels/cuda/{wildcards.op}/{wildcards.variant}.cu")
    if not source.is_file():
        return []  # the rule reports the missing source itself
    return [str(h.relative_to(Path(workflow.basedir).resolve())) for h in headers(source)]


# capture.smk


# check.smk


def subject_of(wildcards):
    """The implementation, variant and cubin behind a checked name (an implementation, or an attempt's variant)."""
    subjects = subjects_of(ns_of(wildcards), wildcards.op, [wildcards.subject])
    if wildcards.subject not in subjects:
        raise ValueError(f"{wildcards.subject} is not measured for {wildcards.op} in namespace {wildcards.ns}")
    return subjects[wildcards.subject]


def check_inputs(wildcards):
    ns, subject = ns_of(wildcards), subject_of(wildcards)
    files = input_files(ns, wildcards.op)
    files["code"] = code_of("check", wildcards.op)
    files["kernel"] = peer_sources(subject["implementation"], wildcards.op)
    if subject["cubin"]:
        files["cubin"] = subject["cubin"]
    if subject["implementation"] == "compiled":
        files |= tune_of(ns, wildcards.op)
    return files


def tune_of(ns, op, subjects=None):
    """The tunes an op's torch.compile jobs compile from (script.py points inductor at the kept cache)."""
    compiled = subjects is None or any(s["implementation"] == "compiled" for s in subjects.values())
    return {"tune": f"work/{ns.name}/tune/{op}.parquet"} if compiled and op in holdings.tuned_ops(ns) else {}


def probe_after(wildcards):
    """What gpu_probe waits for. Without a GPU in sight, every CPU stage (cpu_stages): the probe's failure is then
    the run's last word, with everything that needs no GPU done. With one, nothing: the GPU checks start as soon as
    their own inputs are built instead of after the last CPU check."""
    return [] if GPU_VISIBLE else cpu_stages(wildcards)


def cpu_stages(wildcards):
    """Everything a namespace needs no GPU for: run first, so a machine without one still gets all of it."""
    ns = ns_of(wildcards)
    return (
        [input_files(ns, op)["hashes"] for op in ns.ops]
        + expand("work/{ns}/{table}.parquet", ns=ns.name, table=built_tables(ns.name))
        + cpu_checks(ns)
    )


def cpu_checks(ns):
    """Each op's CPU checks: of the implementations it has that run on the CPU."""
    return [
        f"work/{ns.name}/check/cpu/{op}/{impl}.parquet"
        for op in ns.ops
        for impl in ns.implementations_of(op)
        if impl in CHECKED_ON_CPU
    ]


def all_checks(wildcards):
    ns = ns_of(wildcards)
    return cpu_checks(ns) + [
        f"work/{ns.name}/check/gpu/{op}/{name}.parquet" for op in ns.ops for name in ns.subjects(op)
    ]


# note.smk


def note_tables(ns):
    return holdings.note_reads(NAMESPACES[ns], archived_tables(ns))


def verdict_tables(ns):
    return holdings.verdicts_read(NAMESPACES[ns], archived_tables(ns))


def known_archives(ns):
    """The pinned archives a measured namespace's known peers are read from: every other namespace's built for
    the same architecture (the job keeps those measured on the same GPU model)."""
    return {
        other: n.archived
        for other, n in NAMESPACES.items()
        if other != ns
        and n.archived
        and other in ARCHIVES
        and ARCHIVES[other].resolved()["arch"] == NAMESPACES[ns].arch
    }


def peer_shapes(ns):
    """The (op, shape) pairs a namespace's verdicts are made at: its seed shapes and its sweep's points."""
    seeds = [[op, OPS[op].label(ns.shapes[op])] for op in ns.ops]
    return seeds + [[op, label] for op in (ns.sweep or {}) for label in sweep_shapes(ns, op)]


def summary_inputs(wildcards):
    """The tables the summary and the attempts table are read from."""
    return {name: evidence_table(wildcards.ns, name) for name in ("capture_summary", "spans", "kernels")}


def note_template(ns):
    """The note's template (the namespace file's `note:`, in the checkout's notes/). A template is code: an archive
    nobody pinned gets the generated note, whatever template it or a namespace file names."""
    n = NAMESPACES[ns]
    return None if n.replay and not n.replay_pinned else n.note


def figure_names(ns):
    """The figures the figures job draws for a namespace, which a note may place, with their captions."""
    from fieldnote.publish.figures import captions

    return captions(bool(NAMESPACES[ns].progression), list(NAMESPACES[ns].sweep or {}))


def history_inputs(ns):
    """Other namespaces' evidence the note draws on: the progression's summaries, the drift baseline's kernels."""
    n, history = NAMESPACES[ns], history_files(ns)
    files = {}
    if n.progression:
        files["progression"] = [history[f"history/{other}.summary.parquet"] for other in n.progression["namespaces"]]
    if n.drift:
        base = n.drift["baseline"]
        files["drift"] = [history[f"history/{base}.summary.parquet"], history[f"history/{base}.kernels.parquet"]]
    return files


# original.smk


def original_files(wildcards):
    """The two JSON files, when present; when absent the import job says where it looked (one message)."""
    folder = Path(ns_of(wildcards).evidence["original"])
    return [str(folder / f) for f in ("comparison-results.json", "comparison-profiles.json") if (folder / f).exists()]


# sweep.smk


def sweep_points(ns, op):
    from fieldnote.evidence.sweep import subjects

    return subjects(op, ns.sweep[op], subjects_of(ns, op, ns.implementations), ns.seed)


def counted_points(ns):
    """op -> the sweep points a target names, where the namespace captures counters, each with its cubin."""
    return holdings.counted_points(ns, lambda op: subjects_of(ns, op, ns.implementations))


def sweep_ops(ns, table):
    """The ops whose sweep reports make up a collected sweep table."""
    return list(counted_points(ns)) if table == "counters" else list(ns.sweep)


def sweep_shapes(ns, op):
    """The labels of the shapes of an op's sweep that have a point (a shape every contract refuses has none)."""
    return list(dict.fromkeys(OPS[op].label(p["shape"]) for p in sweep_points(ns, op)[0].values()))


def sweep_points_at(ns, op, label):
    """The sweep points of an op at one shape: one sweep check job's."""
    points = {name: p for name, p in sweep_points(ns, op)[0].items() if OPS[op].label(p["shape"]) == label}
    if not points:
        raise ValueError(f"{label} is not a shape of the {op} sweep of namespace {ns.name}")
    return points


def sweep_check_files(wildcards):
    """An op's sweep checks, a table per shape."""
    return sweep_check_paths(wildcards.ns, wildcards.op)


def sweep_check_paths(ns_name, op):
    return expand(
        "work/{ns}/sweep/{op}/checks/{shape}.parquet", ns=ns_name, op=op, shape=sweep_shapes(NAMESPACES[ns_name], op)
    )


def sweep_reports(wildcards, table=None):
    """What a collected sweep table gathers: the checks per op and shape, the kernels and counters per op."""
    ns, table = ns_of(wildcards), table or wildcards.table
    if table == "checks":
        return [f for op in ns.sweep for f in sweep_check_paths(wildcards.ns, op)]
    return expand("work/{ns}/sweep/{op}/{table}.parquet", ns=wildcards.ns, op=sweep_ops(ns, table), table=table)


def sweep_check_priority(wildcards):
    """The sweep checks of the op whose chain after them is the longest first (its sweep capture verifies every
    timed call, so its time goes with the bytes the sweep moves), each op's largest point before its others, the
    longest check of each (docs/pipeline-time.md, "The order of the GPU jobs")."""
    sweep = ns_of(wildcards).sweep

    def moved(op):
        work = [OPS[op].work(shape) for shape in sweep[op]]
        return sum(w[0] for w in work), sum(w[1] for w in work)

    op = OPS[wildcards.op]
    largest = max(sweep[wildcards.op], key=lambda shape: op.work(shape)[0])
    rank = sorted(sweep, key=moved).index(wildcards.op)
    return PRIORITY_SWEEP_CHECK + rank + (len(sweep) if op.label(largest) == wildcards.shape else 0)


def sweep_inputs(wildcards):
    """A sweep of an op is measured after the op passed its checks at the seed shape, on the same kernels."""
    files = gpu_workload_inputs(wildcards, ns_of(wildcards).implementations)
    files.pop("npz"), files.pop("hashes")
    return files


def sweep_check_inputs(wildcards):
    """A sweep check needs the op's kernels and its torch.compile check, not its other checks at the seed shape nor
    the sanitizer's: it is a check and times nothing, so it starts beside them. The compiled check autotunes at the
    seed shape, also a
    sweep point, and writes what inductor chose into the cache the measurements read: a sweep check beside it would
    autotune the same graph again and might overwrite that choice. The sweep's measurements wait for everything."""
    ns, files = ns_of(wildcards), sweep_inputs(wildcards)
    subjects = subjects_of(ns, wildcards.op, ns.implementations)  # the subjects sweep_inputs' checks are of, in order
    checks = dict(zip(subjects, files.pop("checks"), strict=True))
    files.pop("sanitized")
    files["compiled"] = [checks[n] for n, s in subjects.items() if s["implementation"] == "compiled"]
    return files


# time.smk


def gpu_workload_inputs(wildcards, names=None):
    """What a GPU measurement of an op depends on: its inputs, the passed check of every subject it measures and
    their kernels (the rule adds its code)."""
    ns, op = ns_of(wildcards), wildcards.op
    subjects = subjects_of(ns, op, names)
    files = input_files(ns, op)
    files["checks"] = [f"work/{ns.name}/check/gpu/{op}/{name}.parquet" for name in subjects]
    implementations = {s["implementation"] for s in subjects.values()}
    files["kernels"] = [f for impl in sorted(implementations - set(TOOLCHAINS)) for f in peer_sources(impl, op)]
    files["cubins"] = [s["cubin"] for s in subjects.values() if s["cubin"]]
    # no hand-written variant is timed before the sanitizer has passed it
    files["sanitized"] = [
        f"work/{ns.name}/sanitize/{op}/{s['variant']}.parquet" for s in subjects.values() if s["cubin"]
    ]
    return files | tune_of(ns, op, subjects)


def sanitized_files(ns):
    """The sanitizer's table of each hand-written variant a namespace measures."""
    n = NAMESPACES[ns]
    return [
        f"work/{ns}/sanitize/{op}/{s['variant']}.parquet"
        for op in n.ops
        for s in subjects_of(n, op).values()
        if s["cubin"]
    ]
