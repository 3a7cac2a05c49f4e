// neighbor_feature_slices16 — weighted neighbor aggregation over a CSR graph, FP32, 16 features of each row at a
// time: kernels/cuda/include/neighbor_slices.cuh (its launch, arguments and design).
#include "neighbor_slices.cuh"

NEIGHBOR_SLICES_ENTRY(neighbor_feature_slices16, 16)
