// Neighbor aggregation over a CSR graph a slice of the features at a time (kernels/cuda/neighbor/
// neighbor_feature_slices*.cu, each its slice's width):
//
//   out[row][f] = sum_{e in [rowptr[row], rowptr[row+1])} weight[e] * x[src[e]][f]
//
// Launch: grid (ceil(nodes * SLICE / 256), ceil(features / SLICE), 1), block (256, 1, 1), no shared memory.
//   Arguments (rowptr, src, weight, x, out, nodes, features).
//
// Design: blockIdx.y is the slice, so the blocks of one slice run before the next one's (the GPU starts blocks in
//   the order of their index, x first). While they run, the edges gather columns SLICE floats wide from x: nodes x
//   SLICE x 4 bytes, which the L2 holds at a million nodes where the whole of x (a row of 64 features, 256 bytes)
//   does not, so a source's slice comes from DRAM once instead of once an edge. What it pays: the row pointers, the
//   sources and the weights are read once a slice. A thread per (row, feature of the slice), as in
//   neighbor_csr_row_feature, with the same order of the sums, so the two agree bit for bit.
//   Measured at a million nodes on an H100 (kernel notes of h200-003, section 10): the slices did not stay in the
//   L2 (hit rate 24%), DRAM traffic doubled, 2.6 times the adopted kernel's time; kept as that attempt's record.
#pragma once

template <int SLICE>
__device__ __forceinline__ void feature_slices(const int* __restrict__ rowptr, const int* __restrict__ src,
                                               const float* __restrict__ weight, const float* __restrict__ x,
                                               float* __restrict__ out, int nodes, int features)
{
    static_assert(256 % SLICE == 0, "a block holds whole rows of a slice");
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long row = t / SLICE;
    const int f = blockIdx.y * SLICE + threadIdx.x % SLICE;
    if (row >= nodes || f >= features) return;
    const int begin = rowptr[row], end = rowptr[row + 1];
    float acc = 0.f;
#pragma unroll 4
    for (int e = begin; e < end; ++e) acc = fmaf(weight[e], x[static_cast<long long>(src[e]) * features + f], acc);
    out[row * features + f] = acc;
}

#define NEIGHBOR_SLICES_ENTRY(NAME, SLICE)                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        NAME(const int* __restrict__ rowptr, const int* __restrict__ src, const float* __restrict__ weight,        \
             const float* __restrict__ x, float* __restrict__ out, int nodes, int features)                        \
    {                                                                                                              \
        feature_slices<SLICE>(rowptr, src, weight, x, out, nodes, features);                                       \
    }
