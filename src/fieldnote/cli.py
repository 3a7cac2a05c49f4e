"""The `fieldnote` command: `fieldnote show results/<ns>`, `fieldnote bench OP SUBJECT...`, and `fieldnote new
NAME --from NS` (a namespace to measure, made from an existing one)."""
from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import yaml

from .core.errors import PipelineError
from .core.io import write_bytes
from .registry import names

# What a new namespace leaves of its source unless asked: predictions are written for one run before it is measured,
# targets are that run's aims (a missed one must name its limit, which a copy cannot know), and a template's prose
# reads that run's evidence (the generated note reads any).
OF_THE_SOURCE_RUN = ("predictions", "targets", "note")


def project_config(here: Path) -> Path:
    """The config/ of the project `fieldnote new` runs in (the nearest folder, here or above, holding
    config/namespaces/), not the installed package's: from a non-editable install that would be the environment."""
    for folder in (here, *here.parents):
        if (folder / "config" / "namespaces").is_dir():
            return folder / "config"
    raise PipelineError(f"{here} is in no project (no config/namespaces/ here or above): run it in "
                        "the checkout")


def new(name: str, source: str, config: Path, with_note: bool = False) -> Path:
    """config/namespaces/<name>.yaml from <source>'s file: the same implementations, variants, shapes and the rest,
    without `archived` (it is to be measured), without the source's predictions, targets and note template unless
    `with_note`, and last in the source's progression where it has one. Its header says what it was made from,
    when, and what it left out."""
    names.check(name, "NAME")
    names.check(source, "--from")  # a namespace's name, not a path: no `..`, no separator
    folder = config / "namespaces"
    path, origin = folder / f"{name}.yaml", folder / f"{source}.yaml"
    if path.exists():
        raise PipelineError(f"{path} exists already: choose another name")
    if not origin.is_file():
        raise PipelineError(names.unknown(source, [p.stem for p in folder.glob("*.yaml")]))
    data = _source(origin, config.parent)
    data.pop("archived", None)
    left = [] if with_note else [key for key in OF_THE_SOURCE_RUN if data.pop(key, None) is not None]
    if "progression" in data:
        data["progression"]["namespaces"] = [n for n in data["progression"]["namespaces"] if n != name] + [name]
    header = (f"# Made on {date.today().isoformat()} by `fieldnote new {name} --from {source}"
              f"{' --with-note' if with_note else ''}`: to be measured (snakemake results/{name}, on a GPU).\n")
    if left:
        header += f"# Left out, being of {source}'s run: {', '.join(left)} (`--with-note` keeps them).\n"
    write_bytes(path, (header + yaml.safe_dump(data, sort_keys=False)).encode())
    return path


def _source(origin: Path, root: Path) -> dict:
    """The namespace file a new one is made from: inside the checkout once its symlinks are followed (a link
    could copy a file from anywhere), read as the pipeline reads one (size, aliases, duplicate keys), a mapping."""
    if not origin.resolve().is_relative_to(root.resolve()):
        raise PipelineError(f"--from: {origin} is a link to {origin.resolve()}, outside the checkout "
                            f"({root.resolve()})")
    from .registry.config import _read_yaml

    data = _read_yaml(origin)
    if not isinstance(data, dict) or not data:
        what = "empty" if not data else f"a {type(data).__name__}"
        raise PipelineError(f"--from: {origin} is {what}, not a namespace file's mapping of keys")
    return data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="fieldnote", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("show", help="print a bundle's evidence tables", add_help=False)
    commands.add_parser("bench", help="gate, then time subjects of one op side by side (GPU)", add_help=False)
    made = commands.add_parser("new", help="a new namespace to measure, from an existing one")
    made.add_argument("name")
    made.add_argument("--from", dest="source", required=True, help="the namespace to start from")
    made.add_argument("--with-note", action="store_true",
                      help="keep the source's note template, predictions and targets (left out by default)")
    args, rest = parser.parse_known_args(argv)
    if args.command == "show":
        from .publish import show
        show.main(rest, prog="fieldnote show")
    elif args.command == "bench":
        from .measure import bench
        bench.main(rest, prog="fieldnote bench")
    else:
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        try:
            path = new(args.name, args.source, project_config(Path.cwd()), with_note=args.with_note)
        except PipelineError as e:
            sys.exit(f"fieldnote: {e}")
        print(f"fieldnote: wrote {path}; measure it with `snakemake --cores 8 results/{args.name}` on a GPU machine")


if __name__ == "__main__":
    main()
