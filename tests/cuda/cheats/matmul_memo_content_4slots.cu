// A cheat (tests/test_adversarial.py): the product remembered by a few sampled elements of A and B and the sizes,
// four results. Two input sets alternating in the same buffers both stay remembered; fresh ones never match.
#define MEMO_BY_CONTENT 1
#define MEMO_BY_POINTER 0
#define MEMO_SLOTS 4
#include "matmul_memo.cuh"
