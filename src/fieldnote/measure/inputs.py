"""Inputs: deterministic per (op, shape, seed), written once and shared by every namespace that uses them.

Each array's SHA-256 is taken over its raw bytes, as the original project hashed its a.bin, b.bin, ...
"""
from __future__ import annotations

import hashlib
import io

import numpy as np

from ..core.io import write_bytes, write_json
from ..registry.ops import OPS


def path_for(op: str, shape: dict, seed: int) -> str:
    return f"work/inputs/{op}/{OPS[op].label(shape)}-seed{seed}.npz"


def sha256(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def write(op: str, shape: dict, seed: int, npz_path: str, hashes_path: str) -> dict[str, str]:
    arrays = OPS[op].inputs(shape, seed)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_bytes(npz_path, buffer.getvalue())
    hashes = {name: sha256(a) for name, a in arrays.items()}
    write_json(hashes_path, {"op": op, "shape": OPS[op].label(shape), "seed": seed, "sha256": hashes})
    return hashes


def read(npz_path: str) -> dict[str, np.ndarray]:
    with np.load(npz_path) as data:
        return {name: data[name] for name in data.files}
