// How many thread-block clusters of each size are resident at once on this GPU, by the dynamic
// shared memory a block takes (512 threads): the persistent tma-bulk norm kernels launch that
// many clusters, so a size that fits in few GPCs leaves SMs idle.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe_kernel(float* out) {
  extern __shared__ float s[];
  if (out != nullptr) out[blockIdx.x] = s[threadIdx.x];
}

int main() {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) return 1;
  if (cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
      cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024) != cudaSuccess) {
    std::printf("cudaFuncSetAttribute failed\n");
    return 1;
  }
  std::printf("SMs %d\ncluster smem_KiB clusters blocks\n", sms);
  for (int cluster : {1, 2, 4, 8, 16})
    for (int kib : {64, 96, 128, 192, 200}) {
      cudaLaunchConfig_t config = {};
      config.blockDim = dim3(512);
      config.gridDim = dim3(cluster);
      config.dynamicSmemBytes = static_cast<size_t>(kib) * 1024;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = cluster;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      config.attrs = attr;
      config.numAttrs = 1;
      int clusters = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe_kernel, &config);
      std::printf("%d %d %d %d%s\n", cluster, kib, clusters, clusters * cluster,
                  e == cudaSuccess ? "" : cudaGetErrorString(e));
    }
  return 0;
}
