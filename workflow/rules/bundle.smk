# The bundle results/<ns>/: note.md and the evidence tables, assembled last and atomically.


def all_input_hashes(wildcards):
    ns = ns_of(wildcards)
    return [] if ns.imported or ns.replay else [input_files(ns, op)["hashes"] for op in ns.ops]


def published_config(ns):
    """The configuration a bundle records. A replay publishes the one the archive recorded, not this pipeline's
    reading of it, but with the targets its note was held to (the namespace file's, common.smk)."""
    n = NAMESPACES[ns]
    if not n.replay:
        return n.to_dict()
    resolved = ARCHIVES[ns].resolved()
    if n.targets is not None or "targets" in resolved:
        resolved["targets"] = n.targets
    return resolved


rule bundle:
    output:
        # update: Snakemake must not clear the bundle before the job, which swaps the new one in only once it is
        # complete and valid (bundle.py); a failed job leaves the previous bundle as it was
        update(directory("results/{ns}")),
    input:
        unpack(lambda w: bundle_tables(w.ns)),
        note="work/{ns}/note.md",
        figures="work/{ns}/figures",
        environment=lambda w: environment_file(w.ns),
        hashes=all_input_hashes,
        history=lambda w: list(history_files(w.ns).values()),
        code=module("bundle", "evidence"),
    params:
        tables=lambda w: list(bundle_tables(w.ns)),
        history=lambda w: list(history_files(w.ns)),
        resolved=lambda w: published_config(w.ns),
        samples=lambda w: None if ns_of(w).imported else ns_of(w).timing["rounds"] * ns_of(w).timing["iterations"],
        provenance=lambda w: provenance(ns_of(w)),
    script:
        "../scripts/bundle.py"
