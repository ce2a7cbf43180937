// Seed 000 ("CUDA入门:GPU的硬件架构", section Global memory): the third fix,
// when the layout cannot change: read the array of vec3d as plain floats,
// contiguously, into shared memory, then pick x, y, z out of shared memory.
// Added to make it a complete program: tid = threadIdx.x, THREAD_NUM as a
// #define (the block size; the kernel needs blockDim.x == THREAD_NUM), and host code.
#include <cuda_runtime.h>

#define THREAD_NUM 256

struct vec3d { float x, y, z; };

__global__ void func(struct vec3d* data, float* output)
{
    __shared__ float temp[THREAD_NUM * 3];
    int tid = threadIdx.x;
    const float* fdata = (float*) data;
    temp[tid] = fdata[tid];
    temp[tid + THREAD_NUM] = fdata[tid + THREAD_NUM];
    temp[tid + THREAD_NUM*2] = fdata[tid + THREAD_NUM*2];
    __syncthreads();
    output[tid] = temp[tid*3] * temp[tid*3] +
        temp[tid*3+1] * temp[tid*3+1] +
        temp[tid*3+2] * temp[tid*3+2];
}

int main()
{
    struct vec3d* data;
    float* output;
    cudaMalloc((void**)&data, THREAD_NUM * sizeof(struct vec3d));
    cudaMalloc((void**)&output, THREAD_NUM * sizeof(float));
    cudaMemset(data, 0, THREAD_NUM * sizeof(struct vec3d));

    func<<<1, THREAD_NUM>>>(data, output);
    cudaDeviceSynchronize();

    cudaFree(data);
    cudaFree(output);
    return 0;
}
