"""Which tables a namespace has (holdings.py), the one place every stage asks: held against what the runs archived."""
from conftest import ROOT

from fieldnote import holdings
from fieldnote.evidence.archive import Archive
from fieldnote.registry.config import load_defaults, resolve

DEFAULTS = load_defaults(ROOT / "config" / "config.yaml")


def namespace(name: str):
    return resolve(name, ROOT / "config" / "namespaces" / f"{name}.yaml", DEFAULTS)


def test_a_measured_namespace_has_the_tables_its_run_archived():
    """h100-002r read as a namespace to measure: what holdings says it would have is what its run archived (but
    `inputs`, which the bundle writes from the inputs' hashes), and the verdicts (made since)."""
    archived = Archive(ROOT / "archives" / "h100-002r.tar.gz").tables()
    assert {*holdings.bundle(namespace("h100-002r")), "inputs"} == {*archived, "verdicts"}


def test_a_replay_has_what_its_archive_holds_and_what_is_made_from_it():
    n = namespace("mage-006")
    replayed = type("Replay", (), {"replay": True})()
    archived = Archive(ROOT / "archives" / "mage-006.tar.gz").tables()
    held = holdings.bundle(replayed, archived)
    assert held[:len(archived)] == tuple(archived) and set(held) == {*archived, "claims", "verdicts"}
    assert holdings.has(n, "counters") and "counters" not in holdings.note_reads(n)  # no sweep: no standing
    assert set(holdings.verdicts_read(n)) == {"summary", "kernels", "attempts", "ceilings", "known_peers"}
    assert holdings.built(n) == ("resources", "census")


def test_an_imported_namespace_has_what_the_original_evidence_brings():
    n = namespace("original-mage-006")
    assert holdings.bundle(n) == ("spans", "checks", "kernels", "quoted", "census", "capture_summary", "summary",
                                  "claims", "verdicts")
    assert not holdings.has(n, "gpu_state") and not holdings.has(n, "known_peers")
