// How many thread-block clusters of each size are resident at once with one block an SM (the
// wgmma kernels at 224 KiB of shared memory): a cluster lives in one GPC, so GPCs whose SM count
// is no multiple of the size leave SMs idle. MICROBENCH=cluster_residency scripts/gpu_session.sh runs it.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(384, 1) k(int* p) { extern __shared__ int s[]; if (p) p[0] = s[0]; }
int main() {
  const int smem = 7 * 256 * 128 + 2048;  // wgmma_128x128_ks4: 7 stages of (128 + 128) rows of 128 bytes, and barriers
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  for (int c = 1; c <= 16; ++c) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c * 64); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = c; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
    cfg.attrs = &a; cfg.numAttrs = 1;
    int n = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
    printf("cluster %2d: %3d resident clusters = %3d blocks (%s)\n", c, n, n * c, cudaGetErrorString(e));
  }
}
