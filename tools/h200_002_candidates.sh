#!/usr/bin/env bash
# h200-002's candidates, against what they would replace and the peers, at the shapes they were written for
# (docs/h200-002-kernel-notes.md, sections 9 and 10, not yet run; section 8's outcome came from the pipeline):
# one bench process per shape, every subject gated at that shape first (torch.compile is left to the pipeline:
# its autotuning would take most of the call).
# On the H200: source .gpu/enter.sh && export PYTHONPATH=$PWD/src:$PYTHONPATH &&
#   bash tools/h200_002_candidates.sh 2>&1 | tee $OUT/candidates.txt
set -u
bench() { timeout 120 python -m fieldnote.measure.bench "$@" 2>&1 | grep -E " us |FAILED|check failed|rror"; }
for shape in n=128,channels=32 n=256,channels=32 n=512,channels=32 n=300,channels=30 n=100,channels=32; do
  bench triangle triangle_smem_tile32x16 triangle_3xtf32_wgmma torch triton --shape $shape
done
for shape in m=256,n=256,k=256 m=512,n=512,k=512 m=1024,n=1024,k=1024; do
  bench matmul matmul_3xtf32_wgmma_tma_padded matmul_3xtf32_wgmma_tma_splitk torch triton --shape $shape
done
