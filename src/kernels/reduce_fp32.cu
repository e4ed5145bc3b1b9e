// The reduction kernels for fp32 input (see reduce_kernels.cuh).
#include "kernels/reduce_kernels.cuh"

KILN_REDUCE_DEFINE(fp32, float)
