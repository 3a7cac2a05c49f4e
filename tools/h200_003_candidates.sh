#!/usr/bin/env bash
# What h200-003 adopted on the H100's bench (kernel notes of h200-003, sections 10 to 12), side by side with the
# kernels they replaced and the peers (the library peers included), where the change was made and where it was not
# measured, and the candidates built since (sections 14 and 15): the matmul's split-K route at its small sizes, the
# layer norm's three passes at widths no quad divides and its rows fitted to their registers, the batched wgmma
# triangle at the sweep's small shapes (the bench measured it from 256x32 up), and trimul at the task's shapes with
# the ping-pong schedule beside it. One bench a shape, every subject gated there first; torch.compile is left to the
# pipeline (its autotuning would take most of the call). About five minutes.
#   source tools/device_env.sh && bash tools/h200_003_candidates.sh 2>&1 | tee $OUT/candidates.txt
set -u
bench() { timeout 100 python3 -m fieldnote.measure.bench "$@" 2>&1 | grep -E " us |DOES NOT|FAILED|check failed|rror"; }
for shape in m=256,n=256,k=256 m=255,n=257,k=259 m=512,n=512,k=512 m=1024,n=1024,k=1024; do
  bench matmul matmul_3xtf32_wgmma_tma_padded_splitk matmul_3xtf32_wgmma_tma_padded library torch triton \
    --shape $shape
done
for shape in rows=16411,cols=3001 rows=4096,cols=2050 rows=4099,cols=770 rows=4096,cols=768 rows=16384,cols=4096; do
  bench layernorm layernorm_any_width_fitted layernorm_any_width_three_pass library triton torch --shape $shape
done
for shape in n=64,channels=32 n=100,channels=32 n=128,channels=32 n=128,channels=24 n=200,channels=24; do
  bench triangle triangle_3xtf32_wgmma triangle_smem_tile32x16 torch triton --shape $shape
done
for shape in batch=1,n=256,channels=128,hidden=128 batch=1,n=512,channels=128,hidden=128; do
  bench trimul trimul_3xtf32_wgmma_pingpong trimul_3xtf32_wgmma library torch --shape $shape
done
# the ping-pong products' counters at the seed shape: the tensor pipe, the stalls and L2's throughput section 14 names
timeout 150 python3 -m fieldnote.measure.bench trimul trimul_3xtf32_wgmma_pingpong --counters 2>&1 | tail -40
