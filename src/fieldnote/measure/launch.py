"""Launch a hand-written kernel from its cubin with cuda.core, on torch's current stream, by its contract."""
from __future__ import annotations

from pathlib import Path

import torch

from ..core.errors import PipelineError
from ..registry.ops import KernelVariant, TensorMap

# A block may take more than 48 KiB of dynamic shared memory only once its kernel has opted in.
DEFAULT_SHARED_LIMIT = 48 * 1024


class _TorchStream:
    """torch's current stream, as cuda.core's stream protocol wants it."""

    def __cuda_stream__(self):
        return (0, torch.cuda.current_stream().cuda_stream)


_TENSOR_MAPS: dict[tuple, object] = {}


def tensor_map(tensor: torch.Tensor, box: tuple[int, ...]):
    """A TMA descriptor of a contiguous FP32 tensor, `box` elements a copy (row-major order), with the 128-byte
    swizzle; rows and columns past the tensor read as zeros. Passed to a kernel by value.

    A descriptor holds only the address, sizes, strides and box, so one made for the same four is the same: they
    are kept, and a timed loop pays the driver's encoding once, not per launch."""
    key = (tensor.device.index, tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), box)
    if key not in _TENSOR_MAPS:
        from cuda.core._tensor_map import TensorMapSwizzle
        from cuda.core.utils import StridedMemoryView

        if len(_TENSOR_MAPS) >= 256:
            _TENSOR_MAPS.clear()
        view = StridedMemoryView.from_dlpack(tensor, stream_ptr=-1)
        _TENSOR_MAPS[key] = view.as_tensor_map(box, swizzle=TensorMapSwizzle.SWIZZLE_128B)
    return _TENSOR_MAPS[key]


class CudaKernel:
    """A loaded cubin entry; calling it launches one grid for `shape` on torch's current stream."""

    def __init__(self, cubin: Path | bytes, variant: KernelVariant):
        from cuda.core import Device, ObjectCode

        self.device = Device(torch.cuda.current_device())
        self.device.set_current()
        self.variant = variant
        code = cubin if isinstance(cubin, bytes) else Path(cubin).read_bytes()
        self.code = ObjectCode.from_cubin(code)
        self.kernels = {}  # entry -> cuda.core kernel; a contract may route a call to another entry of the cubin
        self._kernel(variant.contract)  # a missing entry fails here, not at the first call
        self.streams = {}  # torch stream handle -> cuda.core stream; graph capture runs on a side stream
        self.workspaces = {}  # (entry, shape) -> scratch tensors, made before any graph capture (the first call)
        self.refusals = {}  # shape -> why not, or None: judged once a shape, not inside every timed call's span

    def _kernel(self, contract):
        if contract.entry not in self.kernels:
            kernel = self.code.get_kernel(contract.entry)
            if contract.dynamic_shared_bytes > DEFAULT_SHARED_LIMIT:
                from cuda.bindings import driver

                attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                (err,) = driver.cuKernelSetAttribute(attribute, contract.dynamic_shared_bytes, kernel.handle,
                                                     self.device.device_id)
                if err != driver.CUresult.CUDA_SUCCESS:
                    raise PipelineError(f"{self.variant.op}/{self.variant.name}: {contract.entry} cannot have "
                                        f"{contract.dynamic_shared_bytes} B of shared memory: {err.name}")
            self.kernels[contract.entry] = kernel
        return self.kernels[contract.entry]

    def _stream(self):
        handle = torch.cuda.current_stream().cuda_stream
        if handle not in self.streams:
            self.streams[handle] = self.device.create_stream(_TorchStream())
        return self.streams[handle]

    def _workspace(self, contract, shape: dict) -> dict:
        if contract.workspace is None:
            return {}
        key = (contract.entry, tuple(sorted(shape.items())))
        if key not in self.workspaces:
            # zeros once: rows a TMA box reads past what the kernels write (and what they write is rewritten every
            # call) are then defined, as compute-sanitizer's initcheck asks
            self.workspaces[key] = {name: torch.zeros(size, dtype=torch.float32, device=f"cuda:{self.device.device_id}")
                                    for name, size in contract.workspace(shape).items()}
        return self.workspaces[key]

    @staticmethod
    def _argument(value, tensors: dict):
        if isinstance(value, TensorMap):
            return tensor_map(tensors[value.tensor], value.box)
        return value.data_ptr() if isinstance(value, torch.Tensor) else value

    def _launch(self, contract, tensors: dict, shape: dict) -> None:
        from cuda.core import LaunchConfig, launch

        config = LaunchConfig(grid=contract.grid(shape), block=contract.block,
                              shmem_size=contract.dynamic_shared_bytes)
        args = [self._argument(a, tensors) for a in contract.args(tensors, shape)]
        launch(self._stream(), config, self._kernel(contract), *args)

    def __call__(self, tensors: dict, shape: dict) -> None:
        contract, key = self.variant.contract, tuple(sorted(shape.items()))
        if key not in self.refusals:
            self.refusals[key] = contract.refusal(shape)
        reason = self.refusals[key]
        if reason:
            raise PipelineError(f"{self.variant.op}/{self.variant.name}: shape {shape} out of range: {reason}")
        contract = contract.route(tensors, shape) or contract
        tensors = {**tensors, **self._workspace(contract, shape)}
        for step in (*contract.before, contract, *contract.after):
            self._launch(step, tensors, shape)
