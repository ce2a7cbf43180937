// Seed 000 ("CUDA入门:GPU的硬件架构", section Shared memory), the fix for
// data[16 * tid]: store rows of 16 into rows of 17 words, then read with stride 17:
//     int row = tid / 16;
//     int column = tid % 16;
//     data[row * 17 + column] = global_data[tid];
//     ...
//     int number = data[17 * tid];
// Added to make it a complete program: tid = threadIdx.x, the size of `data`
// (17 * 32 ints covers data[17 * tid] for the 32 threads of the launch),
// __syncthreads() for the article's "...", and a store of `number`.
#include <cuda_runtime.h>

__global__ void bank_padded_stride17(const int* global_data, int* output)
{
    __shared__ int data[17 * 32];
    int tid = threadIdx.x;

    int row = tid / 16;
    int column = tid % 16;
    data[row * 17 + column] = global_data[tid];
    __syncthreads();

    int number = data[17 * tid];
    output[tid] = number;
}

int main()
{
    int *global_data, *output;
    cudaMalloc((void**)&global_data, 32 * sizeof(int));
    cudaMalloc((void**)&output, 32 * sizeof(int));
    cudaMemset(global_data, 0, 32 * sizeof(int));

    bank_padded_stride17<<<1, 32>>>(global_data, output);
    cudaDeviceSynchronize();

    cudaFree(global_data);
    cudaFree(output);
    return 0;
}
