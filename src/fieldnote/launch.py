"""Launch a hand-written kernel from its cubin with cuda.core, on torch's current stream, by its contract."""
from __future__ import annotations

from pathlib import Path

import torch

from .errors import PipelineError
from .ops import CudaVariant


class _TorchStream:
    """torch's current stream, as cuda.core's stream protocol wants it."""

    def __cuda_stream__(self):
        return (0, torch.cuda.current_stream().cuda_stream)


class CudaKernel:
    """A loaded cubin entry; calling it launches one grid for `shape` on torch's current stream."""

    def __init__(self, cubin: Path | bytes, variant: CudaVariant):
        from cuda.core import Device, ObjectCode

        self.device = Device(torch.cuda.current_device())
        self.device.set_current()
        self.variant = variant
        code = cubin if isinstance(cubin, bytes) else Path(cubin).read_bytes()
        self.kernel = ObjectCode.from_cubin(code).get_kernel(variant.contract.entry)
        self.streams = {}  # torch stream handle -> cuda.core stream; graph capture runs on a side stream

    def _stream(self):
        handle = torch.cuda.current_stream().cuda_stream
        if handle not in self.streams:
            self.streams[handle] = self.device.create_stream(_TorchStream())
        return self.streams[handle]

    def __call__(self, tensors: dict, shape: dict) -> None:
        from cuda.core import LaunchConfig, launch

        contract = self.variant.contract
        reason = contract.supports(shape)
        if reason:
            raise PipelineError(f"{self.variant.op}/{self.variant.name}: shape {shape} out of range: {reason}")
        config = LaunchConfig(grid=contract.grid(shape), block=contract.block,
                              shmem_size=contract.dynamic_shared_bytes)
        args = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in contract.args(tensors, shape)]
        launch(self._stream(), config, self.kernel, *args)
