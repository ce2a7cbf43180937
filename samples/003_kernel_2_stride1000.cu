// Seed 003 ("CUDA系列学习(二)CUDA memory & variables", section 4, kernel design):
// each thread writes x[1000 * tid], so the 32 threads of a warp touch 32 different
// cache lines, "seriously hurting performance".
// Host code added (the article has none); x holds 1000 floats per thread.
#include <cuda_runtime.h>

__global__ void kernel_2(float* x)
{
	int tid = threadIdx.x + blockDim.x * blockIdx.x;
	x[1000*tid] = threadIdx.x;
}

int main()
{
    float* x;
    cudaMalloc((void**)&x, 1000 * 4 * 256 * sizeof(float));

    kernel_2<<<4, 256>>>(x);
    cudaDeviceSynchronize();

    cudaFree(x);
    return 0;
}
