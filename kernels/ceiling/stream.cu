// The memory's own speed for an op's traffic: n_in float4 read and n_out float4 written, nothing computed.
// Timed beside the op's implementations in their capture session (src/fieldnote/ceiling.py), warm and cold: a
// kernel that moves the same bytes faster than the best of these configurations is not physical.
//
// `stream` walks the arrays grid-stride one float4 per step; `stream_x4` issues four independent loads per step
// before any store, for more bytes in flight per thread when the grid is only as large as the GPU holds at once.

#define ZERO4 make_float4(0.0f, 0.0f, 0.0f, 0.0f)

// A load past n_out feeds this sum, stored only on a value the inputs never take, so that it is not removed.
__device__ __forceinline__ void keep(float acc, float *sink)
{
    if (acc == -1.0f)
        *sink = acc;
}

extern "C" __global__ void stream(const float4 *__restrict__ in, float4 *__restrict__ out, int n_in, int n_out,
                                  float *sink)
{
    const int n = max(n_in, n_out);
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float4 v = i < n_in ? in[i] : ZERO4;
        if (i < n_out)
            out[i] = v;
        else
            acc += v.x + v.y + v.z + v.w;
    }
    keep(acc, sink);
}

extern "C" __global__ void stream_x4(const float4 *__restrict__ in, float4 *__restrict__ out, int n_in, int n_out,
                                     float *sink)
{
    const int n = max(n_in, n_out), stride = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (int base = blockIdx.x * blockDim.x + threadIdx.x; base < n; base += 4 * stride) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int i = base + u * stride;
            v[u] = i < n_in ? in[i] : ZERO4;
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int i = base + u * stride;
            if (i < n_out)
                out[i] = v[u];
            else
                acc += v[u].x + v[u].y + v[u].z + v[u].w;
        }
    }
    keep(acc, sink);
}
