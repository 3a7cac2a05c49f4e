// trimul_3xtf32_wgmma — the triangle multiplicative update, outgoing, whole, FP32 (registry/ops/trimul.py):
//
//   z = LayerNorm(x)                                         x: batch x n x n x channels, per pair over the channels
//   a, b = sigmoid(z g_in^T) * (z p_in^T) * mask             each `hidden` wide (p_in, g_in: 2 hidden x channels)
//   t[i][j][h] = sum_k a[i][k][h] b[j][k][h]
//   out = sigmoid(z g_out^T) * (LayerNorm(t) p_out^T)        out: batch x n x n x channels
//
// Launch: the contract's seven steps on one stream (registry/ops/trimul.py says each grid and argument):
//   1. trimul_weights: the four weights transposed into the K x N operands the products read, zero-padded to whole
//      TMA boxes; p_in and g_in interleaved by fours, so a thread's column pair (c, c + 4) is a value and its gate.
//   2. trimul_norm_in: z, a warp a pair, written twice: in the pairs' order (i, k) and transposed (k, j), so that
//      the products into a and into b both write runs along their packed rows.
//   3. trimul_project_in: the two gated products, a blockIdx.z each, on the matmul family's wgmma mainloop; the
//      epilogue applies gate and mask and writes a as A[b h][i][k] and b as B[b h][k][j], the layouts of step 4.
//   4. trimul_product: the batch x hidden products A B (triangle_3xtf32_wgmma's batched product) into t[b h][i][j].
//   5. trimul_norm_out: the LayerNorm of t over the hidden channels, a block 32 pairs, into rows of tn.
//   6. trimul_gate_out: out = sigmoid(z g_out^T).
//   7. trimul_project_out: out *= tn p_out^T.
// Steps 3, 6 and 7 are products of K 128 at the task's shapes (four K steps): their blocks walk the tiles, one a
// SM, so that a block's next loads overlap its epilogue, and their epilogues issue every read a thread makes before
// its first write (`finish`), one memory latency a tile instead of one a row (kernel notes, section 4).
//
// Design for sm_90a: five products of which four are the op's FLOPs at every shape of the task (the projections
//   are 4 hidden + channels + hidden wide per pair, the contraction n per pair and hidden channel), all on the
//   wgmma mainloop with the 3xTF32 split of kernels/cuda/include/wgmma_tma.cuh, their elementwise work (gates,
//   mask, layouts) in its epilogues; the layer norms and the transposes are the bytes between them, each written
//   once and read once or twice. Channels and hidden multiples of 4 (TMA's 16-byte row strides), hidden at most 256.
//
// Steps 1 to 5 and the epilogues: kernels/cuda/include/trimul.cuh, shared with the other trimul variants.
#include "trimul.cuh"

TRIMUL_PROJECT_IN_ENTRY(Adopted, STAGES)
TRIMUL_OUT_ENTRIES(Adopted, STAGES)
