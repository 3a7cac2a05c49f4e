"""The library peers (issue 46): an op's own library, measured as the implementation `library`, through the same
gate as every other implementation; its version recorded, its absence one line."""
import sys

import pytest
import yaml
from conftest import ROOT

from fieldnote.core.errors import PipelineError
from fieldnote.measure import check, gpu
from fieldnote.measure.implementations import runner
from fieldnote.registry.ops import OPS

TOL = {"rtol": 1e-4, "atol": 1e-4}


def test_a_library_peer_is_an_implementation_of_the_ops_that_name_one_only(tmp_path):
    from fieldnote.registry.config import load_defaults, resolve

    with_library = [op for op, spec in OPS.items() if spec.library]
    assert with_library and all("library" in OPS[op].implementations for op in with_library)
    assert all("library" not in spec.implementations for spec in OPS.values() if spec.library is None)
    path = tmp_path / "peers.yaml"
    path.write_text(yaml.safe_dump({"ops": list(OPS), "implementations": ["torch", "library"], "variants": {}}))
    ns = resolve("peers", path, load_defaults(ROOT / "config" / "config.yaml"))
    assert {op for op in OPS if "library" in ns.subjects(op)} == set(with_library)


def test_cusparse_through_torch_sparse_passes_every_case_of_the_gate_on_the_cpu():
    """torch.sparse's CSR times dense runs on the CPU too (cuSPARSE on the GPU): the graph's own CSR arrays taken as
    they are pass the full, fresh, small and edge cases (no edges; the same pair many times, every copy summed)."""
    cases = check.cases("neighbor", OPS["neighbor"].cpu_test_shape, 7, None, small_only=False)
    table = check.run_checks(runner("neighbor", "library"), "neighbor", "library", "cpu", cases, TOL)
    assert table["passed"].all(), table.to_string()
    assert {"edge:no-edges", "edge:duplicate-edges", "full", "fresh"} <= set(table["case"])


def test_a_library_that_does_not_import_is_one_error_naming_its_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "liger_kernel", None)  # import liger_kernel raises ImportError
    monkeypatch.delitem(sys.modules, "kernels.library.layernorm", raising=False)
    with pytest.raises(PipelineError, match=r"layernorm: its library peer Liger does not import here .* install "
                                            r"'liger-kernel' or leave 'library' out"):
        runner("layernorm", "library")
    with pytest.raises(PipelineError, match="gelu has no library peer"):
        runner("gelu", "library")


def test_each_library_peer_s_version_is_recorded_and_named_by_the_note(monkeypatch):
    import importlib.metadata

    import pandas as pd

    from fieldnote.publish import note

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: (
        real(name) if name != "liger-kernel" else (_ for _ in ()).throw(importlib.metadata.PackageNotFoundError)))
    found = gpu.libraries()
    assert found["neighbor"] == {"library": "cuSPARSE", "package": "torch", "version": real("torch")}
    assert found["layernorm"] == {"library": "Liger", "package": "liger-kernel", "version": None}
    assert set(found) == {op for op, spec in OPS.items() if spec.library}
    summary = pd.DataFrame({"op": ["layernorm", "neighbor", "neighbor"],
                            "implementation": ["library", "torch", "library"]})
    assert note.libraries(summary, {"libraries": found}) == (
        " The Library column is each op's own library, as its users call it: Liger (liger-kernel at a version not "
        f"recorded) for LayerNorm; cuSPARSE (torch {real('torch')}) for Neighbor aggregation. Not measured: quack "
        "(quack-kernels) for LayerNorm, whose CuTe DSL runtime (nvidia-cutlass-dsl-libs-cu13), packed, is more than "
        "one call to the GPU machine carries beside the project.")
    assert note.libraries(summary[summary["implementation"] == "torch"], {"libraries": found}) == ""


def test_a_shape_out_of_a_library_s_range_is_left_out_of_its_gate_and_its_sweep_with_the_reason():
    """cuEquivariance's gated GEMMs take whole tiles of channels (196 raised an assertion inside the package on
    the GPU): the gate checks the library at the cases in its range only, the sweep leaves the point out with the
    reason."""
    from fieldnote.evidence.sweep import subjects

    trimul, odd = OPS["trimul"], {"batch": 1, "n": 130, "channels": 196, "hidden": 160}
    reason = trimul.refusal("library", None, odd)
    assert "whole tiles" in reason and trimul.refusal("torch", None, odd) is None
    cases = check.cases("trimul", trimul.medium_shape, 7, None, small_only=True, implementation="library")
    every = check.cases("trimul", trimul.medium_shape, 7, None, small_only=True, implementation="cuda")
    assert [c.name for c in cases] == ["small", "edge:all-masked", "edge:heavy-tailed"] and len(every) == 4
    assert all(c.shape["channels"] % 32 == 0 for c in cases)
    library = {"implementation": "library", "variant": None, "cubin": None}
    points, skipped = subjects("trimul", [odd, {**odd, "channels": 128, "hidden": 128}], {"library": library}, 7)
    assert list(points) == ["library@1x130x128x128"]
    assert skipped == [{"op": "trimul", "implementation": "library", "variant": "library", "shape": "1x130x196x160",
                        "reason": reason}]
