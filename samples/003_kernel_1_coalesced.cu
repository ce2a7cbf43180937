// Seed 003 ("CUDA系列学习(二)CUDA memory & variables", section 4, kernel design):
// the 32 threads of a warp write neighbouring elements x[0] .. x[31] of one cache
// line: "a good transfer".
// Host code added (the article has none).
#include <cuda_runtime.h>

__global__ void kernel_1(float* x)
{
	int tid = threadIdx.x + blockDim.x * blockIdx.x;
	x[tid] = threadIdx.x;
}

int main()
{
    float* x;
    cudaMalloc((void**)&x, 4 * 256 * sizeof(float));

    kernel_1<<<4, 256>>>(x);
    cudaDeviceSynchronize();

    cudaFree(x);
    return 0;
}
