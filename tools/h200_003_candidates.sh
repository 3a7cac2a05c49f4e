#!/usr/bin/env bash
# The candidates of h200-003's kernel notes, section 18, side by side with what they would replace and the peers
# (the library peers included): the matmul's split-K in a cluster on TMA at the sizes whose tiles leave SMs idle,
# and triangle_by_size at the sweep's small shapes and past its threshold. One bench a shape, every subject gated
# there first; torch.compile is left to the pipeline (its autotuning would take most of the call). About 90 s.
#   source tools/device_env.sh && bash tools/h200_003_candidates.sh 2>&1 | tee $OUT/candidates.txt
set -u
bench() { timeout 60 python3 -m fieldnote.measure.bench "$@" 2>&1 | grep -E " us |DOES NOT|FAILED|check failed|rror"; }
for shape in m=256,n=256,k=256 m=255,n=257,k=259 m=512,n=512,k=512 m=300,n=500,k=100; do
  bench matmul matmul_3xtf32_wgmma_cluster_splitk matmul_3xtf32_wgmma_tma_padded_splitk triton torch --shape $shape
done
for shape in n=64,channels=32 n=128,channels=32 n=200,channels=24; do
  bench triangle triangle_by_size triangle_3xtf32_wgmma torch --shape $shape
done
