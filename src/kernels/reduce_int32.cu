// The reduction kernels for int32 input (see reduce_kernels.cuh).
#include "kernels/reduce_kernels.cuh"

KILN_REDUCE_DEFINE(int32, int)
