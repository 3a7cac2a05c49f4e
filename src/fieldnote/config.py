"""Namespaces: load config/config.yaml and config/namespaces/<ns>.yaml, validate both, apply defaults.

Everything downstream sees only the resolved `Namespace`; a bad file is one `PipelineError` naming the
file and the key, raised before any job runs.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from pathlib import Path

import jsonschema
import yaml
from referencing import Registry, Resource

from .errors import PipelineError
from .ops import OPS
from .paths import SCHEMAS


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
    sweep: dict | None = None
    roofline: dict | None = None
    targets: dict | None = None
    replay: str | None = None
    archived: str | None = None

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

    def subjects(self, op: str) -> dict[str, dict]:
        """What the GPU stages measure for an op, by name: each implementation, then each attempt's variant and
        the variant it is compared with (a variant is measured under its own name, as implementation cuda)."""
        found = {impl: {"implementation": impl, "variant": self.variants.get(op) if impl == "cuda" else None}
                 for impl in self.implementations}
        for attempt in self.attempts:
            for name in (attempt["variant"], attempt["compared_with"]):
                if name not in found and name in OPS[op].cuda_variants:
                    found[name] = {"implementation": "cuda", "variant": name}
        return found

    def capture_backends(self) -> list[str]:
        from .capture import resolve as resolve_backends
        return resolve_backends(self.capture["backends"])

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("replay", "archived")}

    @classmethod
    def from_dict(cls, data: dict, replay: str | None = None, archived: str | None = None) -> Namespace:
        """A namespace as an archive's config.resolved.json recorded it (replay needs no config file)."""
        return cls(**{**data, "implementations": tuple(data["implementations"]),
                      "attempts": tuple(data.get("attempts", ())), "replay": replay,
                      "archived": archived})


def _schema(name: str) -> dict:
    return yaml.safe_load((SCHEMAS / name).read_text())


def _validator(name: str) -> jsonschema.Validator:
    registry = Registry().with_resources(
        (n, Resource.from_contents(_schema(n))) for n in ("config.schema.yaml", "namespace.schema.yaml"))
    schema = _schema(name)
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path}: no such file") from None
    except yaml.YAMLError as e:
        raise PipelineError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
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
    return f"key '{where}': {error.message}"


def validate(data: dict, schema_name: str, path: Path) -> None:
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


def _check_attempts(attempts: tuple[dict, ...], implementations: list[str], path: Path) -> None:
    """An attempt is a CUDA variant of some op, compared with an implementation or a variant of the same op."""
    variants = {v: op for op in OPS for v in OPS[op].cuda_variants}
    for i, attempt in enumerate(attempts):
        key = f"{path}: key 'attempts.{i}"
        op = variants.get(attempt["variant"])
        if op is None:
            raise PipelineError(f"{key}.variant': unknown variant '{attempt['variant']}'")
        if "cuda" not in implementations:
            raise PipelineError(f"{key}': attempts are CUDA variants, and implementation cuda is not listed")
        other = attempt["compared_with"]
        if other not in implementations and variants.get(other) != op:
            raise PipelineError(f"{key}.compared_with': '{other}' is neither an implementation of this namespace "
                                f"nor a variant of {op}")


def resolve(name: str, path: Path, defaults: dict) -> Namespace:
    """Validate one namespace file and merge it over the defaults."""
    data = _read_yaml(path)
    validate(data, "namespace.schema.yaml", path)
    shapes = copy.deepcopy(defaults["shapes"])
    shapes.update(data.get("shapes", {}))
    if "evidence" in data:
        data = {"implementations": ["torch", "triton", "rust"], "variants": {}, **data}
    variants = data["variants"]
    if "cuda" in data["implementations"]:
        for op in OPS:
            if op not in variants:
                raise PipelineError(f"{path}: key 'variants.{op}' is missing (implementation cuda needs a variant)")
    for op, variant in variants.items():
        if variant not in OPS[op].cuda_variants:
            known = ", ".join(OPS[op].cuda_variants)
            raise PipelineError(f"{path}: key 'variants.{op}': unknown variant '{variant}' (known: {known})")
    attempts = tuple(data.get("attempts", ()))
    _check_attempts(attempts, data["implementations"], path)
    if "roof_fraction" in data.get("targets", {}) and "sweep" not in data:
        raise PipelineError(f"{path}: key 'targets.roof_fraction': needs a sweep (key 'sweep') to be judged on")
    return Namespace(
        name=name, file=str(path), description=data.get("description", "").strip(),
        implementations=tuple(data["implementations"]), variants=dict(variants),
        shapes={op: shapes[op] for op in OPS}, seed=data.get("seed", defaults["seed"]),
        arch=data.get("arch", defaults["arch"]),
        tolerance={**defaults["tolerance"], **data.get("tolerance", {})},
        timing={**defaults["timing"], **data.get("timing", {})},
        capture={**defaults["capture"], **data.get("capture", {})},
        evidence=data.get("evidence"),
        progression=data.get("progression"),
        drift=data.get("drift"),
        attempts=attempts,
        sweep=data.get("sweep"),
        roofline={**defaults["roofline"], **data.get("roofline", {})},
        targets=data.get("targets"),
        archived=data.get("archived"),
    )


def load_namespaces(config_dir: Path, defaults: dict) -> dict[str, Namespace]:
    """Every config/namespaces/*.yaml, resolved; the file name (without .yaml) is the namespace. Namespaces
    named by a progression or drift baseline must exist."""
    found = {p.stem: resolve(p.stem, p, defaults) for p in sorted((config_dir / "namespaces").glob("*.yaml"))}
    for ns in found.values():
        named = [("progression.namespaces", n) for n in (ns.progression or {}).get("namespaces", [])]
        named += [("drift.baseline", ns.drift["baseline"])] if ns.drift else []
        for key, other in named:
            if other not in found:
                raise PipelineError(f"{ns.file}: key '{key}': unknown namespace '{other}'")
    return found
