// CUTLASS's FP32-accurate GEMM as a user instantiates it: its device-level Gemm on the tensor-op path with
// OpMultiplyAddFastF32, which splits each FP32 operand into TF32 terms and sums three products. The few tile
// configurations below are the ones a user would try first; kernels/library/matmul.py takes the fastest per shape.
// It is CUTLASS's FP32-accurate GEMM on Hopper too: CUTLASS 4.2's emulated-FP32 mainloops on the newer MMAs
// (MainloopSm100...FastF32, BF16 terms) are Blackwell's, and none of its SM90 collectives splits FP32 operands.
#include <cuda_runtime.h>

#include "cutlass/gemm/device/gemm.h"

namespace {
template <int Tm, int Tn, int Tk, int Wm, int Wn, int Stages, int Align>
using Gemm3xTF32 = cutlass::gemm::device::Gemm<
    float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<Tm, Tn, Tk>,
    cutlass::gemm::GemmShape<Wm, Wn, Tk>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, Align, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages, Align, Align, false,
    cutlass::arch::OpMultiplyAddFastF32>;

template <typename G>
int run(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  typename G::Arguments args({m, n, k}, {a, k}, {b, n}, {c, n}, {c, n}, {1.0f, 0.0f});
  G gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 1;
  return gemm(args, nullptr, stream) == cutlass::Status::kSuccess ? 0 : 2;
}
}  // namespace

extern "C" int fieldnote_cutlass_configs() { return 3; }

// config 0: a 128-square tile, K steps of sixteen, three stages; 1: the same tile with K steps of thirty-two; 2: a
// 64-square tile in four stages, more blocks for small products. quads: the 128-bit access path, where n and k are
// multiples of four and the three pointers 16-byte aligned (the caller knows them), else the scalar one. Each call
// builds and checks its arguments as CUTLASS's device API has them (host time in the span, not in the kernel's).
// Returns 0, or why not.
extern "C" int fieldnote_cutlass_gemm(int config, int quads, const float* a, const float* b, float* c, int m, int n,
                                      int k, cudaStream_t stream) {
  switch (config * 2 + (quads ? 0 : 1)) {
    case 0: return run<Gemm3xTF32<128, 128, 16, 64, 64, 3, 4>>(a, b, c, m, n, k, stream);
    case 1: return run<Gemm3xTF32<128, 128, 16, 64, 64, 3, 1>>(a, b, c, m, n, k, stream);
    case 2: return run<Gemm3xTF32<128, 128, 32, 64, 64, 3, 4>>(a, b, c, m, n, k, stream);
    case 3: return run<Gemm3xTF32<128, 128, 32, 64, 64, 3, 1>>(a, b, c, m, n, k, stream);
    case 4: return run<Gemm3xTF32<64, 64, 16, 32, 32, 4, 4>>(a, b, c, m, n, k, stream);
    case 5: return run<Gemm3xTF32<64, 64, 16, 32, 32, 4, 1>>(a, b, c, m, n, k, stream);
  }
  return 3;
}
