#!/usr/bin/env bash
# The candidates of h200-003's kernel notes, section 17, side by side with what they would replace and the peers
# (the library peers included): the matmul's split-K in a cluster at the sizes whose tiles leave SMs idle (and at
# 1000^3, where it takes no cluster), and every hand-written triangle kernel at the sweep's small shapes, for a route
# by size. One bench a shape, every subject gated there first; torch.compile is left to the pipeline (its
# autotuning would take most of the call). About three minutes.
#   source tools/device_env.sh && bash tools/h200_003_candidates.sh 2>&1 | tee $OUT/candidates.txt
set -u
bench() { timeout 100 python3 -m fieldnote.measure.bench "$@" 2>&1 | grep -E " us |DOES NOT|FAILED|check failed|rror"; }
for shape in m=256,n=256,k=256 m=255,n=257,k=259 m=512,n=512,k=512 m=300,n=500,k=100 m=1000,n=1000,k=1000; do
  bench matmul matmul_3xtf32_wgmma_cluster_splitk matmul_3xtf32_wgmma_tma_padded_splitk library torch triton \
    --shape $shape
done
for shape in n=64,channels=32 n=100,channels=32 n=128,channels=32 n=128,channels=24 n=200,channels=24; do
  bench triangle triangle_3xtf32_wgmma triangle_smem_tile32x16 triangle_3xtf32_mma triangle_lane_channel_tile4x2 \
    torch triton --shape $shape
done
