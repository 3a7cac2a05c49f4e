// trimul_3xtf32_wgmma_pingpong — trimul_3xtf32_wgmma with its three walking products (the gated input projections,
// the output gate, the output projection: K of 128 at the task's shapes) on the ping-pong schedule:
//
//   a tile is 128 pairs x 64 columns, and the block's two consumer warpgroups take its tiles in turn, one's
//   wgmma while the other runs the epilogue of its last tile (gates, mask, the scattered writes of a and b, the
//   reads of out), the producer loading and splitting the ring for both in the order they run.
//
// Launch: trimul_3xtf32_wgmma's seven steps (registry/ops/trimul.py), the walking products' tiles 64 columns wide,
// their dynamic shared memory five stages of 40 KB and the two turns' barriers.
//
// Design for sm_90a: Nsight Compute had each of the three products' tensor pipes busy about 31% of their time with
// both consumer warpgroups in the epilogue together, no product issued; alternating them keeps one issuing while
// the other writes. A's tile is loaded and split once for 64 columns instead of 128 (twice the L2 reads and splits
// a FLOP). Prediction in docs/h200-003-kernel-notes.md, sections 13 and 14.
//
// Measured (an H100, kernel notes of h200-003, section 16): 434.14 µs at the seed shape against the adopted
// kernel's 401.54, the input projection's tensor pipe 27% against 31%, and shared-load bank conflicts where the
// adopted kernel has none. Not adopted: kept as the registry's measured attempt of the schedule.
#include "trimul.cuh"

TRIMUL_PROJECT_IN_ENTRY(PingPong, PINGPONG_STAGES)
TRIMUL_OUT_ENTRIES(PingPong, PINGPONG_STAGES)
