"""Declared quotations: values another document states that no table here holds (other sessions' captures,
single-run attempts), each with what it says and where it comes from. A note prints them marked as quoted."""
from __future__ import annotations

from pathlib import Path

import pandas as pd


def quoted_table(path: Path) -> pd.DataFrame:
    """The declared quotations of a namespace (values another document states that no table here holds), one row
    per value, each with what it is and where it comes from: the `quoted` evidence table."""
    import yaml

    from ..core.errors import PipelineError

    try:
        return _table(yaml.safe_load(Path(path).read_text()), path)
    except (yaml.YAMLError, OSError) as e:
        raise PipelineError(f"{path}: not a readable quotations file ({e})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PipelineError(f"{path}: a quotation lacks or misstates a key ({type(e).__name__}: {e}); each has "
                            "says, decimals and values") from None


def _table(data: dict, path) -> pd.DataFrame:
    source = data.get("source", {})
    where = f"{source.get('title', path)} ({source.get('file', '?')}, SHA-256 {source.get('sha256', '?')})"
    rows = []
    for key, q in data.get("quotations", {}).items():
        values = q["values"] if isinstance(q["values"], list) else [q["values"]]
        for position, value in enumerate(values):
            rows.append({"key": key, "position": position, "value": float(value), "decimals": int(q["decimals"]),
                         "unit": q.get("unit", ""), "says": " ".join(q["says"].split()),
                         "provenance": f"{where}: {' '.join(q['says'].split())}"})
    return pd.DataFrame(rows, columns=["key", "position", "value", "decimals", "unit", "says", "provenance"])
