"""Namespaces: load config/config.yaml and config/namespaces/<ns>.yaml, validate both, apply defaults.

Everything downstream sees only the resolved `Namespace`; a bad file is one `PipelineError` naming the
file and the key, raised before any job runs.
"""
from __future__ import annotations

import copy
import math
import re
import shutil
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path

import jsonschema
import yaml
from referencing import Registry, Resource

from ..core.errors import PipelineError
from . import names
from .ops import OPS
from .schemas import FAST, schema
from .toolchains import TOOLCHAINS

# The most bytes one op's inputs and output may take at any of a namespace's shapes: the inputs are drawn in host
# memory and the GPU holds them with the output (the H200 has 141 GB); a shape beyond this is a typing slip.
MAX_SHAPE_BYTES = 16 << 30
# A namespace file or config.yaml is read only up to this size (the largest shipped is 7.6 kB), and only this deep
# (the schemas need five levels; libyaml's own limit, 1000, is near Python's recursion limit).
MAX_YAML_BYTES = 1 << 20
MAX_NESTING = 32


def backends(requested: list[str]) -> list[str]:
    """The capture backends a namespace asks for, `auto` resolved: nsys where it is on PATH, else cupti (which needs
    only torch)."""
    return [("nsys" if shutil.which("nsys") else "cupti") if b == "auto" else b for b in requested]


@dataclass(frozen=True)
class Namespace:
    name: str
    file: str
    description: str
    implementations: tuple[str, ...]
    variants: dict[str, str]
    shapes: dict[str, dict[str, int]]
    seed: int
    arch: str
    tolerance: dict[str, float]
    timing: dict[str, int]
    capture: dict
    evidence: dict | None = None
    progression: dict | None = None
    drift: dict | None = None
    attempts: tuple[dict, ...] = ()
    predictions: tuple[dict, ...] = ()  # what each variant was predicted to take, before it was measured
    census: tuple[str, ...] | None = None  # the archs the Triton kernels are censused for (None: the build's arch)
    sweep: dict | None = None
    roofline: dict | None = None
    targets: dict | None = None
    note: str | None = None  # the note's template (notes/<name>.md): authored prose over the evidence
    archived: str | None = None  # the archive a namespace file pins its evidence to, and the archive's SHA-256
    archived_sha256: str | None = None
    replay: str | None = None  # the archive this namespace's evidence is read from, its SHA-256, whether pinned
    replay_sha256: str | None = None
    replay_pinned: bool = False
    stated: dict | None = None  # the namespace file as written (an archived one may state only what its archive has)

    @property
    def imported(self) -> bool:
        """Evidence read from another project's files, not measured by this pipeline."""
        return self.evidence is not None

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(self.shapes)

    def op_params(self, op: str) -> dict:
        """The resolved values one op's jobs depend on (Snakemake params: a change reruns the op)."""
        return {"shape": self.shapes[op], "seed": self.seed, "tolerance": self.tolerance,
                "variant": self.variants.get(op), "arch": self.arch}

    def variant_of(self, op: str, implementation: str) -> str | None:
        """The variant a hand-written implementation runs for an op (None for a library peer)."""
        return variant_of(self.variants, op, implementation)

    def implementations_of(self, op: str) -> list[str]:
        """The namespace's implementations the op has (Op.implementations), in the namespace's order."""
        return [impl for impl in self.implementations if impl in OPS[op].implementations]

    def subjects(self, op: str) -> dict[str, dict]:
        """What the GPU stages measure for an op, by name: each implementation it has, then each attempt's
        variant and the variant it is compared with (a variant is measured under its own name, as its toolchain's
        implementation)."""
        found = {impl: {"implementation": impl, "variant": self.variant_of(op, impl)}
                 for impl in self.implementations_of(op)}
        for attempt in self.attempts:
            for name in (attempt["variant"], attempt["compared_with"]):
                if name not in found and name in OPS[op].kernel_variants:
                    found[name] = {"implementation": OPS[op].variant(name).toolchain, "variant": name}
        return found

    def capture_backends(self) -> list[str]:
        return backends(self.capture["backends"])

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in PROVENANCE}

    @classmethod
    def from_dict(cls, data: dict, **provenance) -> Namespace:
        """A namespace as an archive's config.resolved.json recorded it (replay needs no config file); validate
        it first (`validate_resolved`)."""
        return cls(**{**data, "implementations": tuple(data["implementations"]),
                      "attempts": tuple(data.get("attempts", ())),
                      "predictions": tuple(data.get("predictions", ())),
                      "census": tuple(data["census"]) if data.get("census") else None, **provenance})


PROVENANCE = ("archived", "archived_sha256", "replay", "replay_sha256", "replay_pinned", "stated")  # not the config


@cache  # one per process: every namespace file is validated against the same schemas
def _validator(name: str) -> jsonschema.Validator:
    registry = Registry().with_resources(
        (n, Resource.from_contents(schema(n))) for n in ("config.schema.yaml", "namespace.schema.yaml"))
    contents = schema(name)
    return jsonschema.validators.validator_for(contents)(contents, registry=registry)


_FAST = FAST  # libyaml's where PyYAML has it: parsing is most of what a no-op run spends on the configuration


class _UniqueKeyLoader(_FAST):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML would keep the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key '{key}' is given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _repeated(data) -> str | None:
    """The key of the first list or mapping met twice in `data`: --config's values are YAML, whose aliases repeat
    one (seven levels of them made a 28 MB error line in 5 s, nine would take minutes)."""
    seen, queue = set(), [("", data)]
    for where, value in queue:  # breadth first (the queue grows as it is read): the shallowest repeat is named
        if not isinstance(value, dict | list):
            continue
        if id(value) in seen:
            return where or "(top level)"
        seen.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        queue += [(f"{where}.{key}" if where else str(key), item) for key, item in items]
    return None


def _require_finite(data, where: str) -> None:
    key = _nonfinite(data)
    if key:
        raise PipelineError(f"{where}: key '{key}': not a finite number")


def _nonfinite(data, where: str = "") -> str | None:
    """The key of the first NaN or infinity in `data`: a tolerance or target of .nan compares false and passes."""
    if isinstance(data, float) and not math.isfinite(data):
        return where or "(top level)"
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        found = _nonfinite(value, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


def _read_text(path: Path) -> str:
    """The file's text, read no further than MAX_YAML_BYTES (a size on disk can lie: a FIFO, /dev/zero)."""
    with open(path, "rb") as file:
        raw = file.read(MAX_YAML_BYTES + 1)
    if len(raw) > MAX_YAML_BYTES:
        raise PipelineError(f"{path}: larger than {MAX_YAML_BYTES:,} bytes, more than any configuration needs (the "
                            "largest shipped namespace file is 8 kB): not read")
    return raw.decode("utf-8")


def _refuse_references(text: str, path: Path) -> None:
    """No anchor, alias, nor nesting past MAX_NESTING, seen in the event stream before anything is built: an
    alias repeats what its anchor holds, so nine levels of them make 10**9 values of a few lines (a start took
    235 s, then stopped on a MemoryError). No shipped file uses either."""
    depth = 0
    for event in yaml.parse(text, Loader=_FAST):
        if isinstance(event, yaml.NodeEvent) and event.anchor:  # an alias is a node event too
            alias = isinstance(event, yaml.AliasEvent)
            what = f"an alias (*{event.anchor})" if alias else f"an anchor (&{event.anchor})"
            raise PipelineError(f"{path}: line {event.start_mark.line + 1}: {what} is not allowed (anchors and "
                                "aliases can expand a few lines into gigabytes): write the value out")
        depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
        if depth > MAX_NESTING:
            raise PipelineError(f"{path}: line {event.start_mark.line + 1}: nested deeper than {MAX_NESTING} levels "
                                "(the schemas need five)")


def _read_yaml(path: Path) -> dict:
    try:
        text = _read_text(path)
        _refuse_references(text, path)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except FileNotFoundError:
        raise PipelineError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise PipelineError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:  # a directory, a symlink loop, no permission
        raise PipelineError(f"{path}: cannot be read ({e.strerror or e})") from None
    except yaml.MarkedYAMLError as e:
        where = f", line {e.problem_mark.line + 1}" if e.problem_mark else ""
        raise PipelineError(f"{path}: not valid YAML ({e.problem}{where})") from None
    except yaml.YAMLError as e:
        raise PipelineError(f"{path}: not valid YAML ({' '.join(str(e).split())})") from None
    _require_finite(data, str(path))
    return {} if data is None else data


def _describe(error: jsonschema.ValidationError) -> str:
    """One line for the most relevant schema violation: the key's path and what is wrong with it."""
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        key = ".".join([*map(str, error.absolute_path), extra[0]]) if extra else where
        allowed = ", ".join(error.schema.get("properties", {}))
        return f"key '{key}' is not allowed (allowed here: {allowed})"
    if error.validator == "required":
        missing = error.message.split(" is ")[0].strip("'")
        return f"key '{'.'.join([*map(str, error.absolute_path), missing])}' is missing"
    if error.validator == "maxItems":
        return f"key '{where}': {len(error.instance):,} items, more than the {error.validator_value} it may have"
    written = _as_number(error)
    if written:
        return f"key '{where}': '{error.instance}' is a string: write {written}"
    return f"key '{where}': {_shortened(error.message, error.instance)}"


# YAML 1.1 (PyYAML's) reads a float only with a dot and a signed exponent: `1e-4` and `1.0e4` are strings to it.
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _as_number(error: jsonschema.ValidationError) -> str | None:
    """How to write, as YAML reads a number, a number a file wrote as a string (None when it is not one)."""
    wanted, text = error.validator_value, error.instance
    if error.validator != "type" or wanted not in ("number", "integer") or not isinstance(text, str):
        return None
    if not _NUMBER.fullmatch(text.strip()):
        return None
    if wanted == "integer":
        value = float(text)
        return str(int(value)) if value.is_integer() else None
    mantissa, _, exponent = text.strip().lower().partition("e")
    mantissa += "" if "." in mantissa else ".0"
    exponent = exponent if not exponent or exponent[0] in "+-" else f"+{exponent}"
    return mantissa + (f"e{exponent}" if exponent else "")


def _shortened(message: str, instance) -> str:
    """A message quoting a long value quotes its start: a 1 MiB list is no line to read."""
    if len(message) <= 300:
        return message
    quoted = repr(instance)
    if quoted not in message:
        return f"{message[:300]}..."
    return message.replace(quoted, f"{quoted[:60]}... ({len(quoted):,} characters)")


def validate(data: dict, schema_name: str, path: Path | str) -> None:
    """Raise one PipelineError for the most telling violation: a misspelt key explains a missing one, so an
    unknown key is reported first."""
    errors = list(_validator(schema_name).iter_errors(data))
    unknown = [e for e in errors if e.validator == "additionalProperties"]
    error = unknown[0] if unknown else jsonschema.exceptions.best_match(errors)
    if error is not None:
        raise PipelineError(f"{path}: {_describe(error)}")


def load_defaults(path: Path) -> dict:
    data = _read_yaml(path)
    validate(data, "config.schema.yaml", path)
    return data


def check_config(config: dict, path: Path) -> None:
    """The run's configuration as Snakemake merged it (config.yaml, then --config): the file is read again here,
    strictly (duplicate keys, non-finite numbers), and validated alone, so that what is wrong in the merge came
    from the command line and is named so."""
    load_defaults(path)
    repeated = _repeated(config)
    if repeated:
        raise PipelineError(f"--config: key '{repeated}': a YAML alias is not allowed (it repeats a value, and a few "
                            "of them expand into gigabytes): write the value out")
    _require_finite(config, "--config")
    validate(config, "config.schema.yaml", "--config")
    if config.get("replay"):  # read before any job: an archive elsewhere on the machine is not the checkout's
        inside_checkout(config["replay"], "--config replay", hint=": copy the archive into the checkout, for "
                        "instance under archives/, and replay it from there")


def variant_of(variants: dict, op: str, implementation: str) -> str | None:
    """`variants.<op>` names one variant (measured as its toolchain's implementation) or maps each hand-written
    implementation to its variant (two toolchains side by side)."""
    chosen = variants.get(op)
    if isinstance(chosen, dict):
        return chosen.get(implementation)
    known = OPS[op].kernel_variants.get(chosen) if chosen else None
    return chosen if known is not None and known.toolchain == implementation else None


def _check_variants(variants: dict, selected: list[str], implementations: list[str], path: Path) -> None:
    """Every variant named is a known variant of its op built by the toolchain it is named for, and every
    hand-written implementation listed has one for every op measured that has kernels of its toolchain."""
    for op, chosen in variants.items():
        for impl, variant in (chosen.items() if isinstance(chosen, dict) else [(None, chosen)]):
            key = f"{path}: key 'variants.{op}{'.' + impl if impl else ''}'"
            if variant not in OPS[op].kernel_variants:
                known = ", ".join(OPS[op].kernel_variants)
                raise PipelineError(f"{key}: unknown variant '{variant}' (known: {known})")
            toolchain = OPS[op].variant(variant).toolchain
            if impl is not None and toolchain != impl:
                raise PipelineError(f"{key}: '{variant}' is built by toolchain {toolchain}, not {impl}")
    for impl in [i for i in implementations if i in TOOLCHAINS]:
        for op in [op for op in selected if impl in OPS[op].implementations]:
            if variant_of(variants, op, impl) is None:
                missing = "missing" if op not in variants else f"not a variant of {impl}"
                raise PipelineError(f"{path}: key 'variants.{op}' is {missing} (implementation {impl} needs a "
                                    "variant)")


def _check_attempts(attempts: tuple[dict, ...], implementations: list[str], path: Path) -> None:
    """An attempt is a hand-written variant of some op, compared with an implementation or a variant of the same
    op; its toolchain's implementation is one the namespace measures."""
    variants = {v: op for op in OPS for v in OPS[op].kernel_variants}
    for i, attempt in enumerate(attempts):
        key = f"{path}: key 'attempts.{i}"
        op = variants.get(attempt["variant"])
        if op is None:
            raise PipelineError(f"{key}.variant': unknown variant '{attempt['variant']}'")
        toolchain = OPS[op].variant(attempt["variant"]).toolchain
        if toolchain not in implementations:
            raise PipelineError(f"{key}': '{attempt['variant']}' is a {toolchain} variant, and implementation "
                                f"{toolchain} is not listed")
        other = attempt["compared_with"]
        if other not in implementations and variants.get(other) != op:
            raise PipelineError(f"{key}.compared_with': '{other}' is neither an implementation of this namespace "
                                f"nor a variant of {op}")


def _check_sizes(shapes: dict, sweep: dict | None, path: Path) -> None:
    """A shape whose inputs and output would not fit in memory is refused with its size, before anything is drawn."""
    points = [(f"shapes.{op}", op, shape) for op, shape in shapes.items()]
    points += [(f"sweep.{op}.{i}", op, shape) for op, listed in (sweep or {}).items() for i, shape in enumerate(listed)]
    for key, op, shape in points:
        size = OPS[op].work(shape)[0] if OPS[op].work else 0
        if size > MAX_SHAPE_BYTES:
            raise PipelineError(f"{path}: key '{key}': {OPS[op].label(shape)} needs {size / 2**30:,.1f} GiB of inputs "
                                f"and output, more than the {MAX_SHAPE_BYTES >> 30} GiB a shape may take")


def resolve(name: str, path: Path, defaults: dict) -> Namespace:
    """Validate one namespace file and merge it over the defaults."""
    names.check(name, f"{path}: the namespace's name (its file name)")
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: a namespace file is a mapping of keys, not a {type(data).__name__}")
    validate(data, "namespace.schema.yaml", path)
    _confine(data, path)
    stated = copy.deepcopy(data)
    shapes = copy.deepcopy(defaults["shapes"])
    shapes.update(data.get("shapes", {}))
    if "evidence" in data:
        data = {"implementations": ["torch", "triton", "rust"], "variants": {}, **data}
    data = {"implementations": [], "variants": {}, **data}  # an archived namespace may say no more than `archived`
    variants = data["variants"]
    # the ops it lists, in the registry's order (required of a namespace to be measured); an archived or imported
    # file that lists none: those its archive or evidence holds, known once its archive is read (resolve_archived)
    hand = any(i in TOOLCHAINS for i in data["implementations"])
    selected = [op for op in OPS if op in data.get("ops", variants if hand else OPS)]
    for op in selected:
        if op not in shapes:
            raise PipelineError(f"{path}: key 'shapes.{op}' is missing (and config/config.yaml has no default shape "
                                f"for {op})")
    _check_variants(variants, selected, data["implementations"], path)
    attempts = tuple(data.get("attempts", ()))
    _check_attempts(attempts, data["implementations"], path)
    if "roof_fraction" in data.get("targets", {}) and "sweep" not in data:
        raise PipelineError(f"{path}: key 'targets.roof_fraction': needs a sweep (key 'sweep') to be judged on")
    _check_sizes({op: shapes[op] for op in selected}, data.get("sweep"), path)
    archived = data.get("archived", {})
    return Namespace(
        name=name, file=str(path), description=data.get("description", "").strip(),
        implementations=tuple(data["implementations"]), variants=dict(variants),
        shapes={op: shapes[op] for op in selected}, seed=data.get("seed", defaults["seed"]),
        arch=data.get("arch", defaults["arch"]),
        tolerance={**defaults["tolerance"], **data.get("tolerance", {})},
        timing={**defaults["timing"], **data.get("timing", {})},
        capture={**defaults["capture"], **data.get("capture", {})},
        evidence=data.get("evidence"),
        progression=data.get("progression"),
        drift=data.get("drift"),
        attempts=attempts,
        predictions=tuple(data.get("predictions", ())),
        census=tuple(data["census"]) if "census" in data else None,
        sweep=data.get("sweep"),
        roofline={**defaults["roofline"], **data.get("roofline", {})},
        targets=data.get("targets"),
        note=_note_template(data.get("note"), path),
        archived=archived.get("archive"),
        archived_sha256=archived.get("sha256"),
        stated=stated,
    )


# The reading of the evidence, not the measurement: the rest of an archived namespace's file is what its archive fixed.
# The prose too: a description, what changed at a stage, why an attempt was not adopted or what limits an op may be
# reworded after the measurement. Not the targets themselves: the verdicts the archive's note holds are evidence,
# and a target moved after the measurement would move them.
READ_WHEN_ARCHIVED = ("archived", "note", "description", "progression.changes", "predictions", "attempts.why",
                      "targets.limits")
# What an archived namespace's file states whole or not at all: targets that leave out one the archive recorded
# differ from it as much as a changed one (the note would still be held to it).
STATED_WHOLE = ("targets",)


def reading(stated: dict) -> dict:
    """The keys of a namespace file that are its archive's measurement (READ_WHEN_ARCHIVED left out)."""
    out = copy.deepcopy(stated)
    for key in READ_WHEN_ARCHIVED:
        *parents, last = key.split(".")
        node = out
        for parent in parents:
            node = node.get(parent, {}) if isinstance(node, dict) else {}
        for each in node if isinstance(node, list) else [node]:  # a key of every item of a list (attempts.why)
            if isinstance(each, dict):
                each.pop(last, None)
    return out


def read_when_archived(resolved: dict, declared: Namespace) -> dict:
    """An archive's recorded namespace (its targets too) with the reading its namespace file states
    (READ_WHEN_ARCHIVED)."""
    resolved.update(note=declared.note, description=declared.description, predictions=list(declared.predictions))
    if resolved.get("targets"):
        limits = (declared.targets or {}).get("limits", resolved["targets"].get("limits"))
        resolved["targets"] = in_op_order({**resolved["targets"], **({"limits": limits} if limits else {})})
    if resolved.get("progression") and declared.progression:
        resolved["progression"]["changes"] = declared.progression.get("changes", {})
    why = {a["variant"]: a["why"] for a in declared.attempts if a.get("why")}
    resolved["attempts"] = [_with_why({k: v for k, v in a.items() if k != "why"}, why)
                            for a in resolved.get("attempts", ())]
    return resolved


def _with_why(attempt: dict, why: dict[str, str]) -> dict:
    """An attempt as the archive recorded it, with the reason the namespace file now gives, if it gives one."""
    return {**attempt, "why": why[attempt["variant"]]} if attempt["variant"] in why else attempt


# The paths a namespace file names that the workflow reads, each with the folder of the checkout it must lie in:
# a template outside notes/, or an archive or quotations elsewhere on the machine, would be read as if they were
# the checkout's. (evidence.original is read in place from ../shared/seed-evidence beside the checkout.)
CONFINED = {"note": "notes", "evidence.quoted": "", "archived.archive": ""}


def inside_checkout(value: str, where: str, folder: str = "", hint: str = "") -> Path:
    """`value`, a path from the checkout's root (the working directory Snakemake runs in), resolved with its
    symlinks followed; it must lie inside the checkout, or inside its `folder`."""
    root = Path.cwd()
    try:
        allowed, target = (root / folder).resolve(), (root / value).resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise PipelineError(f"{where}: {value} cannot be resolved ({e})") from None
    if not target.is_relative_to(allowed):
        inside = f"the checkout's {folder}/" if folder else "the checkout"
        raise PipelineError(f"{where}: {value} is outside {inside} ({allowed}){hint}")
    return target


def _confine(data: dict, path: Path) -> None:
    for key, folder in CONFINED.items():
        *parents, last = key.split(".")
        node = data
        for parent in parents:
            node = node.get(parent, {})
        if last in node:
            inside_checkout(node[last], f"{path}: key '{key}'", folder)


def _note_template(template: str | None, path: Path) -> str | None:
    if template is not None and not Path(template).is_file():
        raise PipelineError(f"{path}: key 'note': no template {template!r} (a path from the checkout's root)")
    return template


def differs(stated, recorded, key: str = "") -> tuple[str, object, object] | None:
    """The first key whose stated value is not the recorded one (a mapping may state some of its keys)."""
    if isinstance(stated, dict) and isinstance(recorded, dict):
        for k, v in stated.items():
            found = differs(v, recorded.get(k), f"{key}.{k}" if key else str(k))
            if found:
                return found
        return None
    if isinstance(stated, str) and isinstance(recorded, str):
        return None if stated.strip() == recorded.strip() else (key, stated, recorded)
    if isinstance(stated, list | tuple) and isinstance(recorded, list | tuple):
        same = len(stated) == len(recorded) and not any(differs(a, b) for a, b in zip(stated, recorded, strict=True))
        return None if same else (key, stated, recorded)
    return None if stated == recorded else (key, stated, recorded)


def in_op_order(targets: dict) -> dict:
    """Targets with their mappings by op (`kernel_us`, `limits`) in the registry's order: an archive's
    config.resolved.json sorts its keys, and a note that lists what limits each op lists them as the tables do."""
    return {key: {op: value[op] for op in OPS if op in value} if isinstance(value, dict) and set(value) <= set(OPS)
            else value for key, value in targets.items()}


def contradicts(stated: dict, recorded: dict) -> tuple[str, object, object] | None:
    """The first key an archived namespace's file states otherwise than its archive recorded (`differs`), as
    (key, stated, recorded); for a key of STATED_WHOLE also one it leaves out of what the archive recorded (stated
    as None)."""
    found = differs(stated, {k: v for k, v in recorded.items() if k in stated})
    for key in [k for k in STATED_WHOLE if k in stated]:
        left_out = None if found else differs(recorded.get(key), stated[key], key)
        if left_out:
            found = (left_out[0], left_out[2], left_out[1])
    return found


def validate_resolved(data, where: str) -> dict:
    """An archive's config.resolved.json, checked by the namespace schema as a namespace file is (less what the
    pipeline adds when it resolves one: the name and file, and an import's implementations; its ops are its
    shapes'), then as one."""
    if not isinstance(data, dict):
        raise PipelineError(f"{where}: not a mapping of keys")
    _require_finite(data, where)
    known = {f.name for f in fields(Namespace)} - set(PROVENANCE)
    extra = sorted(set(data) - known)
    if extra:
        raise PipelineError(f"{where}: key '{extra[0]}' is not allowed (allowed here: {', '.join(sorted(known))})")
    for required in ("name", "file", "implementations", "variants", "shapes"):
        if required not in data:
            raise PipelineError(f"{where}: key '{required}' is missing")
    names.check(data["name"], f"{where}: key 'name'")
    derived = ("name", "file") + (("implementations", "variants") if data.get("evidence") else ())
    resolved = {k: v for k, v in data.items() if k not in derived and v is not None}
    # a resolved namespace's ops are its shapes' keys (Namespace.ops)
    validate({**resolved, "ops": list(data["shapes"])}, "namespace.schema.yaml", Path(where))
    for op in data["shapes"]:
        if op not in OPS:
            raise PipelineError(f"{where}: key 'shapes.{op}': unknown op (known: {', '.join(OPS)})")
    _check_sizes(data["shapes"], data.get("sweep"), Path(where))
    return data


def load_namespaces(config_dir: Path, defaults: dict) -> dict[str, Namespace]:
    """Every config/namespaces/*.yaml, resolved; the file name (without .yaml) is the namespace. Namespaces
    named by a progression or drift baseline must exist."""
    found = {p.stem: resolve(p.stem, p, defaults) for p in sorted((config_dir / "namespaces").glob("*.yaml"))}
    claimed = {}
    for ns in found.values():  # two files cannot pin the same archive: it records one namespace
        if ns.archived and claimed.setdefault(Path(ns.archived).resolve(), ns.file) != ns.file:
            raise PipelineError(f"{ns.file}: key 'archived.archive': {ns.archived} is already the archive of "
                                f"{claimed[Path(ns.archived).resolve()]}")
    for ns in found.values():
        named = [("progression.namespaces", n) for n in (ns.progression or {}).get("namespaces", [])]
        named += [("drift.baseline", ns.drift["baseline"])] if ns.drift else []
        for key, other in named:
            if other not in found:
                raise PipelineError(f"{ns.file}: key '{key}': unknown namespace '{other}'")
    return found
