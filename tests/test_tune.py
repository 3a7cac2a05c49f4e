"""torch.compile's tunes (tune.py) where no GPU is needed: the kept cache chosen, read back and held to."""
import os

import pandas as pd
import pytest

from fieldnote.core.errors import PipelineError
from fieldnote.measure import tune
from fieldnote.publish import note


def tunes_table(tmp_path, spans=(12.0, 10.5, 11.0)):
    root = tmp_path / "work" / "inductor-cache" / "ns" / "gelu"
    rows = [{"op": "gelu", "shape": "4096x768", "tune": i, "cache": str(root / str(i)),
             "generated_sha256": f"{i}" * 64, "generated_kernels": "triton_poi_fused_0", "gpu_us": span,
             "gpu_min_us": span - 0.5, "calls": 100} for i, span in enumerate(spans, 1)]
    table = pd.DataFrame(rows)
    table["kept"] = table["gpu_us"] == table["gpu_us"].min()
    for i in table["tune"]:
        (root / str(i)).mkdir(parents=True)
    (root / tune.KEPT).symlink_to(str(table.loc[table["kept"], "tune"].iloc[0]))
    path = tmp_path / "tune.parquet"
    table.to_parquet(path)
    return path, root


def test_a_job_compiles_from_the_kept_cache_and_its_check_is_held_to_the_kept_source(tmp_path, monkeypatch):
    path, root = tunes_table(tmp_path)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "elsewhere")
    tune.use_kept(path)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str((root / "2").resolve())
    tune.kept_choice(path, {"generated_sha256": "2" * 64}, "ns: gelu / compiled")
    with pytest.raises(PipelineError, match="the cache did not answer"):
        tune.kept_choice(path, {"generated_sha256": "1" * 64}, "ns: gelu / compiled")


def test_a_kept_cache_gone_with_its_machine_is_one_clear_error(tmp_path):
    path, root = tunes_table(tmp_path)
    (root / tune.KEPT).unlink()
    with pytest.raises(PipelineError, match="is gone"):
        tune.use_kept(path)


def test_the_note_prints_each_tune_against_the_kept_one(tmp_path):
    path, _ = tunes_table(tmp_path)
    view = note.compiled_tunes(pd.read_parquet(path))
    assert list(view["Over the kept"]) == ["1.14", "1.00", "1.05"]
    assert list(view["Kept"]) == ["", "kept", ""]
