// The FP32 pipes' own rate: each thread runs CHAINS independent chains of `steps` fused multiply-adds,
// x = fma(x, a, b), and writes one float; nothing else is read or written. Timed beside an op whose precision
// contract is FP32 FMA (src/fieldnote/ceiling.py), its FLOPs 2 * CHAINS * steps a thread: an op's FLOPs done
// faster than this rate are not physical.
//
// Eight chains a thread, so that each warp scheduler has independent FMAs to issue while one waits on its
// result (four cycles), whatever the occupancy; `a` and `b` are arguments, so the compiler can neither fold nor
// shorten a chain. With a = b = 1 each chain counts: x_c = c + steps exactly (below 2^24), and the output,
// CHAINS * steps + CHAINS * (CHAINS - 1) / 2, shows that every step ran.

#define CHAINS 8

extern "C" __global__ void fma_chains(float *__restrict__ out, int steps, float a, float b)
{
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        x[c] = (float)c;
#pragma unroll 16  // the loop's own count and branch in one issue slot of 129
    for (int s = 0; s < steps; ++s) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            x[c] = fmaf(x[c], a, b);
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        sum += x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
