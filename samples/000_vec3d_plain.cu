// Seed 000 ("CUDA入门:GPU的硬件架构", section Global memory): an array of
// 12-byte structs is not read coalesced, "because vec3d is 12 bytes, not 4, 8 or 16".
// Added to make it a complete program: tid = threadIdx.x, THREAD_NUM as a
// #define (the block size), and host code.
#include <cuda_runtime.h>

#define THREAD_NUM 256

struct vec3d { float x, y, z; };

__global__ void func(struct vec3d* data, float* output)
{
    int tid = threadIdx.x;
    output[tid] = data[tid].x * data[tid].x +
        data[tid].y * data[tid].y +
        data[tid].z * data[tid].z;
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
