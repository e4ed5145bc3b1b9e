// The reduction kernels for fp16 input (see reduce_kernels.cuh).
#include "kernels/reduce_kernels.cuh"

KILN_REDUCE_DEFINE(fp16, __half)
