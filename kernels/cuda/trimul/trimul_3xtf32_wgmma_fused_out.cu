// trimul_3xtf32_wgmma_fused_out — trimul_3xtf32_wgmma with its output gate and output projection in one launch:
//
//   out = sigmoid(z g_out^T) * (LayerNorm(t) p_out^T)
//
// Launch: steps 1 to 5 as trimul_3xtf32_wgmma (kernels/cuda/include/trimul.cuh), then
//   6. trimul_out: each 128 x 128 tile of out takes both products, one after the other through the same ring
//      (wgmma_tma::run_two): z g_out^T, whose epilogue writes its sigmoid into the tile, then tn p_out^T, whose
//      epilogue reads it back (the same thread, the same elements) and writes the product. The blocks walk the
//      tiles, one a SM, the producer loading a tile's second product and then the next tile's first under the
//      consumers' epilogues.
//
// Design for sm_90a: trimul_3xtf32_wgmma's steps 6 and 7 each read or write out whole (32 MiB at the seed shape
// each way) and each fill and drain the SMs once; here the gate's tile is read back from L2 a few microseconds after
// it was written, and the SMs fill once. Prediction in docs/h200-003-kernel-notes.md, section 6.
#include "trimul.cuh"

TRIMUL_PROJECT_IN_ENTRY(Adopted, STAGES)

extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)
trimul_out(const __grid_constant__ TensorMap zz, const __grid_constant__ TensorMap gt,
           const __grid_constant__ TensorMap tn, const __grid_constant__ TensorMap pt, float* __restrict__ out,
           int pairs, int channels, int hidden, int tiles_x, int tiles)
{
    wgmma_tma::run_two<BM, STAGES, Adopted>(wgmma_tma::Maps{zz, gt}, GateOut{out, pairs, channels}, channels,
                                            wgmma_tma::Maps{tn, pt}, ProjectOut{out, pairs, channels}, hidden,
                                            tiles_x, tiles);
}
