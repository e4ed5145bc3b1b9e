// The reduction kernels for bf16 input (see reduce_kernels.cuh).
#include "kernels/reduce_kernels.cuh"

KILN_REDUCE_DEFINE(bf16, __nv_bfloat16)
