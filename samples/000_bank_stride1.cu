// Seed 000 ("CUDA入门:GPU的硬件架构", section Shared memory):
//     __shared__ int data[128];
//     int number = data[base + tid];
// Consecutive 4-byte words: every lane of a warp hits a different bank.
// Added to make it a complete program: tid = threadIdx.x, `base` as a kernel
// parameter (uniform across the block), a fill of `data` from global memory
// before the read, and a store of `number` so the read is not optimised away.
#include <cuda_runtime.h>

__global__ void bank_stride1(const int* global_data, int* output, int base)
{
    __shared__ int data[128];
    int tid = threadIdx.x;

    // fill (not in the article): 32 threads x 4 stores cover data[0..127]
    data[tid] = global_data[tid];
    data[tid + 32] = global_data[tid + 32];
    data[tid + 64] = global_data[tid + 64];
    data[tid + 96] = global_data[tid + 96];
    __syncthreads();

    int number = data[base + tid];
    output[tid] = number;
}

int main()
{
    int *global_data, *output;
    cudaMalloc((void**)&global_data, 128 * sizeof(int));
    cudaMalloc((void**)&output, 32 * sizeof(int));
    cudaMemset(global_data, 0, 128 * sizeof(int));

    bank_stride1<<<1, 32>>>(global_data, output, 0);
    cudaDeviceSynchronize();

    cudaFree(global_data);
    cudaFree(output);
    return 0;
}
