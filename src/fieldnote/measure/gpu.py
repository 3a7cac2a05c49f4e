"""Is there a GPU, and the one message a GPU stage gives where there is none."""
from __future__ import annotations

from ..core.errors import PipelineError


def available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def require(stage: str, target: str) -> None:
    """Stop a GPU stage on a machine without a GPU, saying what already ran and what to do instead (the job's one
    line, printed last by the workflow's onerror hook: script.entry)."""
    if not available():
        message = (
            f"no GPU here: stage '{stage}' needs an NVIDIA GPU (torch.cuda.is_available() is False). "
            f"Inputs, build, census and the CPU checks for {target} are done (work/). Run the same command "
            f"on a GPU machine to measure, or rebuild {target} from an archived run without a GPU: "
            f"snakemake --cores 1 {target} --config replay=PATH/TO/{target.removeprefix('results/')}.tar.gz")
        raise PipelineError(message)


def describe() -> dict:
    """The GPU and software the measurements ran on (name, capability, driver, CUDA, torch, triton)."""
    import platform

    import torch
    import triton

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    info = {"gpu": props.name, "capability": f"{props.major}.{props.minor}", "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory, "cuda": torch.version.cuda, "torch": torch.__version__,
            "triton": triton.__version__, "python": platform.python_version(), "host": platform.node()}
    try:
        import pynvml
        pynvml.nvmlInit()
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
    except Exception as e:  # NVML is optional evidence; its absence is recorded, not fatal
        info["driver"] = f"unavailable ({type(e).__name__})"
    info["libraries"] = libraries()
    info["clocks_at_start"] = State()()
    info["host_gpus"] = host_gpus()
    info.update(pipeline())
    return info


def libraries() -> dict:
    """Each op's library peer as installed here (its version None where it is not): the version a library peer
    was measured at is part of its number."""
    from importlib.metadata import PackageNotFoundError, version

    from ..registry.ops import OPS

    def installed(package: str) -> str | None:
        try:
            return version(package)
        except PackageNotFoundError:
            return None
    return {op.name: {"library": op.library.title, "package": op.library.package,
                      "version": installed(op.library.package)} for op in OPS.values() if op.library}


def pipeline() -> dict:
    """This pipeline's version and the git commit it ran from, and whether the checkout was clean: the files that
    differed from that commit or were not in it (their first 50), so a measurement from an edited tree says so."""
    import subprocess

    from .. import __version__
    from ..core.paths import ROOT

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    changes = git("status", "--porcelain", "--untracked-files=all").splitlines()
    from datetime import UTC, datetime

    return {"pipeline_version": __version__, "git_commit": git("rev-parse", "HEAD") or "unknown",
            "git_dirty": bool(changes), "git_changes": changes[:50],
            "probed_utc": datetime.now(UTC).isoformat(timespec="seconds")}


_THROTTLE_NAMES = {  # nvmlClocksEventReasons / nvmlClocksThrottleReasons bits
    0x1: "gpu_idle", 0x2: "applications_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks"}


def nvml():
    """pynvml, initialized; None without the library or a driver (NVML is optional evidence: what it would have
    said is left null, never guessed)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def host_gpus() -> list[dict]:
    """Every GPU of the host as NVML lists them (index, UUID, name), whichever this process may use; none
    without NVML."""
    n = nvml()
    handles = [n.nvmlDeviceGetHandleByIndex(i) for i in range(n.nvmlDeviceGetCount())] if n else []
    return [{"gpu_index": n.nvmlDeviceGetIndex(h), "gpu_uuid": n.nvmlDeviceGetUUID(h),
             "gpu_name": n.nvmlDeviceGetName(h)} for h in handles]


def _nvml_uuid(raw) -> str | None:
    """torch's device UUID (printed bare, or its 16 bytes) as NVML and nvidia-smi name the GPU: `GPU-<uuid>`, lower
    case; None where it reads as neither."""
    from uuid import UUID

    for read in (lambda: UUID(str(raw).removeprefix("GPU-")), lambda: UUID(bytes=bytes(raw.bytes))):
        try:
            return f"GPU-{read()}"
        except (AttributeError, TypeError, ValueError):
            continue
    return None


def _current():
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device())


def uuid() -> str | None:
    """The UUID of the GPU this process runs on (CUDA's current device, after any CUDA_VISIBLE_DEVICES)."""
    return _nvml_uuid(_current().uuid)


def _handle(n):
    """NVML's handle of this process's GPU: by its UUID, or the host's only GPU; None where it cannot be told
    which of the host's GPUs this is (nothing is read from a GPU it may not be)."""
    found = uuid()
    try:
        if found:
            return n.nvmlDeviceGetHandleByUUID(found)
        return n.nvmlDeviceGetHandleByIndex(0) if n.nvmlDeviceGetCount() == 1 else None
    except n.NVMLError:
        return None


def identity() -> dict:
    """The GPU this process runs on: its index on the host as NVML numbers it, its UUID and its name. The index
    is null without NVML, never guessed."""
    n = nvml()
    handle = _handle(n) if n else None
    return {"gpu_index": n.nvmlDeviceGetIndex(handle) if handle else None, "gpu_uuid": uuid(),
            "gpu_name": _current().name}


class State:
    """GPU state read through NVML: clocks, temperature, power, utilization and throttle reasons, of the GPU this
    process runs on (found by its UUID: NVML numbers the host's GPUs whatever CUDA_VISIBLE_DEVICES says).

    Without NVML every reading is empty (and the columns come out null), never invented.
    """

    def __init__(self):
        self.nvml = nvml()
        self.handle = _handle(self.nvml) if self.nvml else None

    def __call__(self) -> dict:
        if self.handle is None:
            return {}
        n, h = self.nvml, self.handle
        reasons = n.nvmlDeviceGetCurrentClocksEventReasons(h) if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons") \
            else n.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        utilization = n.nvmlDeviceGetUtilizationRates(h)
        return {
            "sm_clock_mhz": n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
            "memory_clock_mhz": n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM),
            "temperature_c": n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
            "power_w": n.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "utilization_gpu_pct": utilization.gpu,
            "throttle_reasons": int(reasons),
            "throttle_names": ",".join(name for bit, name in _THROTTLE_NAMES.items() if reasons & bit),
        }
