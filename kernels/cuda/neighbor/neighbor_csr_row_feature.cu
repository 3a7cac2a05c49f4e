// neighbor_csr_row_feature — weighted neighbor aggregation over a CSR graph keyed by destination, FP32.
//
//   out[row][f] = sum_{e in [rowptr[row], rowptr[row+1])} weight[e] * x[src[e]][f]
//
//   rowptr: nodes + 1 ints, src and weight: one entry per edge, x and out: nodes x features, row-major.
// Launch: grid (ceil(nodes * features / 256), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (rowptr, src, weight, x, out, nodes, features).
//
// Design: one thread per (row, feature), flat t = row * features + f. A row's threads are consecutive, so they
//   share the edge list (broadcast loads) and read a gathered row of x contiguously. A row with no edges writes 0.

extern "C" __global__ void __launch_bounds__(256)
neighbor_csr_row_feature(const int* __restrict__ rowptr, const int* __restrict__ src,
                         const float* __restrict__ weight, const float* __restrict__ x, float* __restrict__ out,
                         int nodes, int features)
{
    const long long numel = (long long)nodes * features;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= numel) return;

    // (row, f) of this output; 32-bit division when the tensor allows it (64-bit division is a long sequence).
    int row, f;
    if (numel <= 0x7fffffffLL) {
        const unsigned u = (unsigned)t;
        row = (int)(u / (unsigned)features);
        f = (int)(u - (unsigned)row * (unsigned)features);
    } else {
        row = (int)(t / features);
        f = (int)(t - (long long)row * features);
    }

    const int e_begin = rowptr[row];
    const int e_end = rowptr[row + 1];
    float acc = 0.f;
    for (int e = e_begin; e < e_end; ++e) acc = fmaf(weight[e], x[(long long)src[e] * features + f], acc);
    out[t] = acc;
}
