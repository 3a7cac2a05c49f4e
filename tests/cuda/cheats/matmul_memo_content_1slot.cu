// A cheat (tests/test_adversarial.py): the product remembered by a few sampled elements of A and B and the sizes, the
// last result only. Fresh inputs every timed call never match: it computes each, and is timed as a product.
#define MEMO_BY_CONTENT 1
#define MEMO_BY_POINTER 0
#define MEMO_SLOTS 1
#include "matmul_memo.cuh"
