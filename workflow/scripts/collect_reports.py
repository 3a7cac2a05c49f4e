"""Concatenate per-job reports (JSON rows or Parquet tables) into one namespace table."""
from fieldnote.core.io import write_table
from fieldnote.script import entry

import json

import pandas as pd


@entry
def main(snakemake):
    frames = [pd.DataFrame([json.load(open(p))]) if p.endswith(".json") else pd.read_parquet(p)
              for p in snakemake.input.reports]
    table = pd.concat(frames, ignore_index=True)
    table.insert(0, "namespace", snakemake.wildcards.ns)
    write_table(snakemake.output[0], table)


main(snakemake)  # noqa: F821
