"""The original project's evidence as an evidence source: its published numbers come back exactly."""
from pathlib import Path

import pandas as pd
import pytest
from conftest import SEED_EVIDENCE, import_from_seed, snakemake

from fieldnote.core.errors import PipelineError
from fieldnote.evidence import original
from fieldnote.evidence.measurements import summary
from fieldnote.evidence.summary import summarize
from fieldnote.publish import note

needs_seed = pytest.mark.skipif(not (SEED_EVIDENCE / "mage-006").exists(), reason="../shared/seed-evidence absent")


def mage(ns: str) -> pd.DataFrame:
    tables = original.load(SEED_EVIDENCE / ns)
    return summary(summarize(tables["kernels"]), tables["spans"]).set_index(["op", "implementation"])


@needs_seed
def test_mage_006_kernel_and_span_equal_the_published_values():
    s = mage("mage-006").round(2)
    assert (s.loc[("matmul", "rust"), "kernel_us"], s.loc[("matmul", "rust"), "span_mean_us"]) == (68.62, 74.09)
    assert (s.loc[("layernorm", "rust"), "kernel_us"], s.loc[("layernorm", "rust"), "span_mean_us"]) == (8.97, 12.26)


@needs_seed
def test_mage_006_three_implementation_tables_equal_the_field_note():
    s = mage("mage-006")
    # The field note's tables, to one decimal: kernel, span and launches per op for PyTorch, Triton, Rust.
    kernel = {"matmul": (66.2, 100.8, 68.6), "gelu": (18.3, 7.7, 11.2), "layernorm": (11.2, 8.3, 9.0),
              "triangle": (28.6, 100.5, 81.6), "neighbor": (120.9, 6.1, 10.3)}
    span = {"matmul": (61.0, 93.3, 74.1), "gelu": (35.6, 28.4, 14.0), "layernorm": (26.4, 27.0, 12.3),
            "triangle": (75.0, 100.1, 86.9), "neighbor": (124.1, 27.6, 15.9)}
    launches = {"matmul": (1, 1, 1), "gelu": (2, 1, 1), "layernorm": (1, 1, 1), "triangle": (3, 1, 1),
                "neighbor": (4, 1, 1)}
    for op in kernel:
        rows = [s.loc[(op, impl)] for impl in ("torch", "triton", "rust")]
        assert tuple(round(r["kernel_us"] + 1e-9, 1) for r in rows) == kernel[op], op
        assert tuple(round(r["span_mean_us"] + 1e-9, 1) for r in rows) == span[op], op
        assert tuple(int(r["launches"]) for r in rows) == launches[op], op


@needs_seed
def test_every_original_namespace_reproduces_its_stage_value():
    """The field note's stage table: matmul and layernorm kernel time of the Rust kernel per namespace."""
    stages = {"mage-001": (343.99, 18.64), "mage-002": (141.70, 11.09), "mage-003": (80.00, 10.05),
              "mage-006": (68.62, 8.97)}
    for ns, (matmul, layernorm) in stages.items():
        s = mage(ns).round(2)
        assert (s.loc[("matmul", "rust"), "kernel_us"], s.loc[("layernorm", "rust"), "kernel_us"]) == (matmul,
                                                                                                      layernorm)


@needs_seed
def test_note_renders_the_resource_table_from_the_capture():
    tables = original.load(SEED_EVIDENCE / "mage-006")
    rows = note.resources(tables["kernels"]).set_index("Kernel")
    assert rows.loc["`tiled_matmul_pipeline`", "Registers / thread"] == "96"
    assert rows.loc["`layer_norm_row`", "Grid × block"] == "4096,1,1 × 128,1,1"
    assert rows.loc["`layer_norm_row`", "Shared memory (bytes)"] == "32"


def test_a_missing_evidence_folder_is_one_clear_error(tmp_path):
    with pytest.raises(PipelineError, match="the original evidence is not there"):
        original.load(tmp_path / "mage-006")


def point_at_seed_evidence(project: Path) -> None:
    for path in (project / "config" / "namespaces").glob("original-*.yaml"):
        import_from_seed(path)


@pytest.mark.slow
@needs_seed
def test_original_namespace_renders_without_a_gpu(project: Path):
    point_at_seed_evidence(project)
    run = snakemake(project, "--cores", "1", "results/original-mage-006")
    assert run.returncode == 0, run.stderr
    text = (project / "results" / "original-mage-006" / "note.md").read_text()
    assert "| Matrix multiplication | 68.62 | 74.09 |" in text and "| LayerNorm | 8.97 | 12.26 |" in text
    # the stage table, each value from its own namespace, and the drift bound of the unchanged operations
    assert "| `original-mage-001` | 343.99 | 18.64 |" in text
    assert "| `original-mage-006` | 68.62 (×1.17) | 8.97 (×1.12) |" in text
    assert "| Bias + GELU | 10.97 | 11.15 | +1.6% |" in text
    assert (project / "results" / "original-mage-006" / "figures" / "progression.svg").exists()
    evidence = project / "results" / "original-mage-006" / "evidence"
    assert {p.name for p in evidence.iterdir()} >= {"MANIFEST.sha256", "summary.parquet", "spans.parquet"}
    again = snakemake(project, "-n", "--cores", "1", "results/original-mage-006")
    assert "Nothing to be done" in again.stdout + again.stderr
    report = snakemake(project, "--report", "report.html", "results/original-mage-006")
    assert report.returncode == 0, report.stderr
    assert "kernel-and-span.svg" in (project / "report.html").read_text(errors="replace")


def test_original_namespace_without_its_folder_stops_with_one_message(project: Path):
    path = project / "config" / "namespaces" / "original-mage-003.yaml"
    import_from_seed(path)  # imported, not replayed from its shipped archive
    path.write_text(path.read_text().replace(str(SEED_EVIDENCE / "mage-003"), "/nonexistent/mage-003"))
    run = snakemake(project, "--cores", "1", "results/original-mage-003")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "fieldnote: /nonexistent/mage-003: the original evidence is not there" in run.stderr


@needs_seed
def test_progression_figure_over_two_namespaces(tmp_path):
    from fieldnote.publish import figures
    summaries = {ns: summary(summarize(t["kernels"]), t["spans"])
                 for ns, t in ((ns, original.load(SEED_EVIDENCE / ns)) for ns in ("mage-003", "mage-006"))}
    stages = figures.stage_rows(summaries)
    matmul = stages[stages["op"] == "matmul"]
    assert list(matmul["namespace"]) == ["mage-003", "mage-006"]
    assert [round(v, 2) for v in matmul["kernel_us"]] == [80.00, 68.62]
    paths = figures.save(figures.progression(stages), tmp_path, "progression")
    assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 5000 for p in paths)
