__global__ void fence_then_relaxed(unsigned* c) {
  asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;" :: "l"(c) : "memory");
}
__global__ void release_red(unsigned* c) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(c) : "memory");
}
__global__ void proxy_then_fence(unsigned* c) {
  asm volatile("cp.async.bulk.wait_group 0;\n\tfence.proxy.async.global;" ::: "memory");
  asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;" :: "l"(c) : "memory");
}
