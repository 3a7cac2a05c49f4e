"""The GPU lock across processes: shared holders overlap, an exclusive holder overlaps nobody."""
import multiprocessing
import time

import pytest

from fieldnote import gpulock

HOLD = 0.4


def hold(mode: str, lock: str, spans) -> None:
    import os

    os.environ["FIELDNOTE_GPU_LOCK"] = lock
    with getattr(gpulock, mode)():
        start = time.monotonic()
        time.sleep(HOLD)
        spans.put((mode, start, time.monotonic()))


def spans_of(tmp_path, modes: list[str]) -> list[tuple[str, float, float]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=hold, args=(m, str(tmp_path / "gpu.lock"), queue)) for m in modes]
    for p in processes:
        p.start()
        time.sleep(0.05)  # started in this order, so that each takes the lock in turn or beside the others
    for p in processes:
        p.join(timeout=30)
        assert p.exitcode == 0
    return sorted(queue.get(timeout=5) for _ in modes)


def overlap(a, b) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_shared_holders_run_side_by_side(tmp_path):
    first, second = spans_of(tmp_path, ["shared", "shared"])
    assert overlap(first, second)


@pytest.mark.parametrize("modes", [["exclusive", "shared", "shared"], ["shared", "exclusive", "shared"]])
def test_an_exclusive_holder_overlaps_no_one(tmp_path, modes):
    spans = spans_of(tmp_path, modes)
    window = next(s for s in spans if s[0] == "exclusive")
    assert not any(overlap(window, s) for s in spans if s is not window)


def test_the_wait_is_a_phase_of_the_job(tmp_path, monkeypatch):
    from fieldnote import progress

    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(tmp_path / "gpu.lock"))
    before = progress.spent().get(progress.WAIT, 0.0)
    with gpulock.exclusive():
        pass
    assert progress.spent()[progress.WAIT] >= before


def _shared_free(lock) -> bool:
    """Whether another holder could take the lock shared now."""
    import fcntl
    import os

    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.mark.parametrize("implementation, device, alone", [("compiled", "cuda", True), ("torch", "cuda", False),
                                                            ("cuda", "cuda", False), ("compiled", "cpu", False)])
def test_a_check_has_the_gpu_to_itself_only_where_torch_compile_autotunes(tmp_path, monkeypatch, implementation,
                                                                          device, alone):
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("FIELDNOTE_GPU_LOCK", str(lock))
    with gpulock.for_check(implementation, device):
        assert _shared_free(lock) is not alone
    assert _shared_free(lock)
