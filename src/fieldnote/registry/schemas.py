"""The configuration's schemas (config/schemas/), their per-op parts filled in from the op registry: read by the
configuration's validation and by the names' pattern, below both."""
from __future__ import annotations

import copy
import json
from functools import cache

import yaml

from ..core.paths import SCHEMAS
from .ops import OPS
from .vocabulary import MEASURED

FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML was built with it


def _shape_schema(op) -> dict:
    dims = {d: {"$ref": "#/$defs/dim0" if d in op.may_be_zero else "#/$defs/dim"} for d in op.dims}
    return {"type": "object", "additionalProperties": False, "required": list(op.dims), "properties": dims}


def _per_op(node):
    """The schemas name no op nor implementation: `x-per-op: TEMPLATE` becomes one property per op of the registry
    (`{op}` in the template replaced by its name; `shape` its dims), `x-op-name` the registry's op names and
    `x-implementation-name` the implementations the pipeline measures."""
    if isinstance(node, dict):
        template = node.pop("x-per-op", None)
        if template is not None:
            node["properties"] = {op: _shape_schema(spec) if template == "shape"
                                  else json.loads(json.dumps(template).replace("{op}", op))
                                  for op, spec in OPS.items()}
        if node.pop("x-op-name", False):
            node["enum"] = list(OPS)
        if node.pop("x-implementation-name", False):
            node["enum"] = list(MEASURED)
        for value in node.values():
            _per_op(value)
    elif isinstance(node, list):
        for value in node:
            _per_op(value)
    return node


def schema(name: str) -> dict:
    """A schema of config/schemas/, its per-op parts filled in from the op registry."""
    return _per_op(copy.deepcopy(_schema_file(name)))


@cache  # a no-op run asked for the two schemas six times
def _schema_file(name: str) -> dict:
    return yaml.load((SCHEMAS / name).read_text(), Loader=FAST)  # noqa: S506 (a SafeLoader)
