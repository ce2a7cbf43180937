// Seed 000 ("CUDA入门:GPU的硬件架构", section Global memory): the second fix,
// turn the array of vec3d into three arrays x, y, z (structure of arrays).
// Added to make it a complete program: tid = threadIdx.x, THREAD_NUM as a
// #define (the block size), and host code.
#include <cuda_runtime.h>

#define THREAD_NUM 256

__global__ void func(float* x, float* y, float* z, float* output)
{
    int tid = threadIdx.x;
    output[tid] = x[tid] * x[tid] + y[tid] * y[tid] +
        z[tid] * z[tid];
}

int main()
{
    float *x, *y, *z, *output;
    cudaMalloc((void**)&x, THREAD_NUM * sizeof(float));
    cudaMalloc((void**)&y, THREAD_NUM * sizeof(float));
    cudaMalloc((void**)&z, THREAD_NUM * sizeof(float));
    cudaMalloc((void**)&output, THREAD_NUM * sizeof(float));
    cudaMemset(x, 0, THREAD_NUM * sizeof(float));
    cudaMemset(y, 0, THREAD_NUM * sizeof(float));
    cudaMemset(z, 0, THREAD_NUM * sizeof(float));

    func<<<1, THREAD_NUM>>>(x, y, z, output);
    cudaDeviceSynchronize();

    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
    cudaFree(output);
    return 0;
}
