// neighbor_feature_slices8 — weighted neighbor aggregation over a CSR graph, FP32, 8 features of each row at a
// time: kernels/cuda/include/neighbor_slices.cuh (its launch, arguments and design).
#include "neighbor_slices.cuh"

NEIGHBOR_SLICES_ENTRY(neighbor_feature_slices8, 8)
