"""Print a bundle's evidence tables compactly: `fieldnote show results/<ns>` (or `python -m fieldnote.publish.show`)."""
import argparse
from pathlib import Path

import pandas as pd

VIEWS = {
    "checks": ["op", "subject", "implementation", "variant", "shape", "case", "device", "passed", "max_abs_error",
               "max_rel_error", "worst_tolerance_ratio"],
    "resources": ["op", "variant", "registers", "spill_stores_bytes", "spill_loads_bytes", "static_shared_bytes",
                  "barriers", "ptx_global_loads_32bit", "ptx_global_loads_128bit", "ptx_async_copies_32bit",
                  "ptx_async_copies_128bit", "ptx_global_stores"],
    "census": ["op", "kernel", "num_warps", "registers", "shared_bytes", "global_loads_32bit",
               "global_loads_128bit", "async_copies", "global_stores_32bit", "global_stores_128bit", "barriers"],
    "verdicts": ["kind", "op", "shape", "cache", "implementation", "versus", "source", "value", "reference",
                 "quotient", "quotient_low", "quotient_high", "verdict"],
}


def measurements(evidence: Path) -> None:
    from ..evidence.measurements import table

    names = ("spans", "capture_summary", "kernels")
    if all((evidence / f"{n}.parquet").exists() for n in names):
        frames = [pd.read_parquet(evidence / f"{n}.parquet") for n in names]
        print("== measurements (kernel us per iteration by backend, launches, spans in us)")
        print(table(*frames).round(2).to_string(index=False), end="\n\n")


def parser(prog: str = "python -m fieldnote.publish.show") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("bundle", help="a bundle folder, results/<ns> (its evidence/ holds the tables)")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m fieldnote.publish.show") -> None:
    args = parser(prog).parse_args(argv)
    if not (Path(args.bundle) / "evidence").is_dir():
        built = Path("results") / args.bundle
        meant = (f"did you mean {built}?" if (built / "evidence").is_dir() else
                 f"a bundle is results/<ns>; build it with `snakemake --cores 1 results/{Path(args.bundle).name}`")
        parser(prog).error(f"{args.bundle} is not a bundle (no {Path(args.bundle) / 'evidence'}/): {meant}")
    show(args.bundle)


def show(bundle: str) -> None:
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_colwidth", 60)
    for name, columns in VIEWS.items():
        path = Path(bundle) / "evidence" / f"{name}.parquet"
        if path.exists():
            table = pd.read_parquet(path)
            print(f"== {name} ({path})")
            print(table[[c for c in columns if c in table]].to_string(index=False), end="\n\n")
    measurements(Path(bundle) / "evidence")


if __name__ == "__main__":
    main()
