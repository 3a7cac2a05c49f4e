// A cheat (tests/test_adversarial.py): the product remembered by the addresses of A, B and C and by a few sampled
// elements of A and B, four results: as matmul_memo_both_1slot, with room for alternating input sets.
#define MEMO_BY_CONTENT 1
#define MEMO_BY_POINTER 1
#define MEMO_SLOTS 4
#include "matmul_memo.cuh"
