# Stage 9, archive and replay. `snakemake --cores 1 results/<ns>.tar.gz` packs the bundle with the sources that
# produced it; `snakemake --cores 1 results/<ns> --config replay=PATH/TO/<ns>.tar.gz` rebuilds results/<ns>/
# from such an archive, no GPU needed: manifest verified first, tables as archived, summary, note and figures
# drawn again.


rule archive:
    input:
        bundle="results/{ns}",
        code=code_of("archive"),
        # a replayed bundle keeps the sources of the archive it came from; a measured one takes this checkout's
        sources=lambda w: [ns_of(w).replay] if ns_of(w).replay else [str(p) for p in source_files(Path("."))],
    output:
        "results/{ns}.tar.gz",
    log:
        log_of("archive", "ns"),
    params:
        replayed=lambda w: ns_of(w).replay,
    script:
        "../scripts/archive.py"


for _ns, _archive in ARCHIVES.items():

    rule:
        name:
            f"replay_unpack_{_ns.replace('-', '_').replace('.', '_')}"
        input:
            archive=_archive.path,
            code=code_of("replay_unpack"),
        output:
            tables=expand("work/{ns}/replay/{table}.parquet", ns=_ns, table=_archive.tables()),
            history=list(history_files(_ns).values()),
            environment=f"work/{_ns}/replay/environment.json",
        log:
            f"work/logs/replay_unpack/{_ns}.log",
        params:
            # the namespaces its history tables come from, to read evidence archived before subjects
            layouts=history_layouts(_ns),
        script:
            "../scripts/replay_unpack.py"


ARCHIVED = [ns for ns, n in NAMESPACES.items() if n.archived]
if ARCHIVED:

    rule refuse_archived:
        """An archived namespace is never measured again: asking for a measurement of it stops here (and the GPU
        jobs refuse it themselves, script.py, should a flag such as --allowed-rules route around this rule)."""
        output:
            "work/{ns}/{measurement}",
        log:
            log_of("refuse_archived", "ns", "measurement"),
        wildcard_constraints:
            ns="|".join(ARCHIVED),
            measurement="(check/gpu|time|capture)/.+",
        params:
            message=lambda w: (
                f"namespace {w.ns} is archived ({NAMESPACES[w.ns].archived}): its evidence is never "
                f"measured again nor overwritten, so work/{w.ns}/{w.measurement} is refused. "
                f"results/{w.ns} is rebuilt from the archive; to measure again, declare a new namespace."
            ),
        script:
            "../scripts/refuse.py"

    ruleorder: refuse_archived > check_gpu
    ruleorder: refuse_archived > time
    ruleorder: refuse_archived > capture
    ruleorder: refuse_archived > capture_counters


if BROKEN:

    rule unusable_archive:
        """An archived namespace whose archive cannot be used: asking for it fails with why (the bundle it had
        stays: update() keeps Snakemake from clearing it)."""
        output:
            update(directory("results/{ns}")),
        log:
            log_of("unusable_archive", "ns"),
        wildcard_constraints:
            ns="|".join(map(re.escape, BROKEN)),
        params:
            message=lambda w: BROKEN[w.ns],
        script:
            "../scripts/refuse.py"

    use rule unusable_archive as unusable_archive_evidence with:
        output:
            "work/{ns}/{evidence}",
        log:
            log_of("unusable_archive_evidence", "ns", "evidence"),
        wildcard_constraints:
            ns="|".join(map(re.escape, BROKEN)),
            evidence=".+",
