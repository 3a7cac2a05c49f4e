# The bundle results/<ns>/: note.md and the evidence tables, assembled last and atomically.


rule bundle:
    input:
        unpack(lambda w: bundle_tables(w.ns)),
        note="work/{ns}/note.md",
        page="work/{ns}/note.html",
        template=lambda w: note_template(w.ns) or [],
        figures="work/{ns}/figures",
        environment=lambda w: environment_file(w.ns),
        hashes=all_input_hashes,
        history=lambda w: list(history_files(w.ns).values()),
        code=code_of("bundle"),
    output:
        # update: Snakemake must not clear the bundle before the job, which swaps the new one in only once it is
        # complete and valid (bundle.py); a failed job leaves the previous bundle as it was. In `snakemake
        # --report`: the note, its figures and its evidence tables, each a category, a namespace each
        report(
            update(directory("results/{ns}")),
            patterns=["{page,note}.html", "figures/{figure,[^/]+}.svg", "evidence/{table,[^/]+}.parquet"],
            caption="../report/bundle.rst",
            category=report_category,
            subcategory="{ns}",
        ),
    log:
        log_of("bundle", "ns"),
    params:
        tables=lambda w: list(bundle_tables(w.ns)),
        history=lambda w: list(history_files(w.ns)),
        resolved=lambda w: published_config(w.ns),
        samples=lambda w: None if ns_of(w).imported else ns_of(w).timing["rounds"] * ns_of(w).timing["iterations"],
        provenance=lambda w: provenance(ns_of(w)),
    script:
        "../scripts/bundle.py"


rule unknown_namespace:
    """results/<ns> for a name no namespace file (nor archive) declares: one line listing those there are."""
    output:
        directory("results/{ns}"),
    log:
        log_of("unknown_namespace", "ns"),
    wildcard_constraints:
        ns="".join(f"(?!{re.escape(n)}(?![A-Za-z0-9_-]))" for n in [*NAMESPACES, *BROKEN]) + names.pattern(),
    params:
        message=unknown_namespace,
    script:
        "../scripts/refuse.py"
