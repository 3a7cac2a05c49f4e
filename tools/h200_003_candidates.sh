#!/usr/bin/env bash
# The kernels already built for h200-003's worst points, side by side with what they would replace and the peers
# (the library peers included), at those points: h200-002's split-K matmul and batched wgmma triangle (kernel notes
# of h200-002, sections 9 and 10, built and GPU-tested, never timed), the layer norm's variants that take rows no
# vector divides (layernorm_any_width_paired among them: kernel notes of h200-003, section 8), trimul (its
# counters at the seed shape) and the neighbor aggregation a slice of the features at a time (section 9). One bench a
# shape, every subject gated there first;
# torch.compile is left to the pipeline (its autotuning would take most of the call). About five minutes.
#   source tools/device_env.sh && bash tools/h200_003_candidates.sh 2>&1 | tee $OUT/candidates.txt
set -u
bench() { timeout 100 python3 -m fieldnote.measure.bench "$@" 2>&1 | grep -E " us |DOES NOT|FAILED|check failed|rror"; }
for shape in m=256,n=256,k=256 m=255,n=257,k=259 m=512,n=512,k=512; do
  bench matmul matmul_3xtf32_wgmma_tma_padded matmul_3xtf32_wgmma_tma_splitk matmul_3xtf32_mma_64x64 library torch \
    triton --shape $shape
done
for shape in n=256,channels=32 n=300,channels=30 n=512,channels=32; do
  bench triangle triangle_smem_tile32x16 triangle_3xtf32_wgmma torch triton --shape $shape
done
for shape in rows=16411,cols=3001 rows=4096,cols=2050 rows=1024,cols=768; do
  bench layernorm layernorm_warp_row_any_width layernorm_any_width_paired layernorm_2warp_row_registers \
    layernorm_2warp_row_shared layernorm_block256_3pass library triton torch --shape $shape
done
big=nodes=1048576,features=64,edges=16777216
for shape in $big nodes=5003,features=60,edges=70001; do
  bench neighbor neighbor_csr_row_feature neighbor_feature_slices8 neighbor_feature_slices16 library triton torch \
    --shape $shape
done
# which limit held at 1M nodes (kernel notes of h200-003, section 9): DRAM bytes and the L2's throughput a kernel
timeout 150 python3 -m fieldnote.measure.bench neighbor neighbor_csr_row_feature neighbor_feature_slices8 \
  neighbor_feature_slices16 --shape $big --counters 2>&1 | tail -24
bench trimul trimul_3xtf32_wgmma trimul_3xtf32_wgmma_fused_out library torch --shape batch=2,n=256,channels=128,hidden=128
# the seed shape with Nsight Compute's counters of every kernel of ours and cuEquivariance's (what to change next)
timeout 200 python3 -m fieldnote.measure.bench trimul trimul_3xtf32_wgmma trimul_3xtf32_wgmma_fused_out library --counters 2>&1 | tail -40
