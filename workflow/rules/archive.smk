# Stage 9, archive and replay. `snakemake --cores 1 results/<ns>.tar.gz` packs the bundle with the sources that
# produced it; `snakemake --cores 1 results/<ns> --config replay=PATH/TO/<ns>.tar.gz` rebuilds results/<ns>/
# from such an archive, no GPU needed: manifest verified first, tables as archived, summary, note and figures
# drawn again.


rule archive:
    output:
        "results/{ns}.tar.gz",
    input:
        bundle="results/{ns}",
        sources=lambda w: [str(p) for p in source_files(Path("."))],
    script:
        "../scripts/archive.py"


if REPLAY:

    rule replay_unpack:
        output:
            tables=expand("work/{ns}/replay/{table}.parquet", ns=REPLAY.namespace, table=REPLAY.tables()),
            history=list(history_files(REPLAY.namespace).values()),
            environment=f"work/{REPLAY.namespace}/replay/environment.json",
        input:
            archive=config["replay"],
            code=module("archive"),
        script:
            "../scripts/replay_unpack.py"
