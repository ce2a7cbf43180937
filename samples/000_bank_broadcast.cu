// Seed 000 ("CUDA入门:GPU的硬件架构", section Shared memory):
//     int number = data[3];
// Every thread reads the same 32-bit word: it is broadcast, no bank conflict.
// Added to make it a complete program: tid = threadIdx.x, a fill of `data`
// before the read, and a store of `number`.
#include <cuda_runtime.h>

__global__ void bank_broadcast(const int* global_data, int* output)
{
    __shared__ int data[128];
    int tid = threadIdx.x;

    data[tid] = global_data[tid];   // fill (not in the article)
    __syncthreads();

    int number = data[3];
    output[tid] = number;
}

int main()
{
    int *global_data, *output;
    cudaMalloc((void**)&global_data, 32 * sizeof(int));
    cudaMalloc((void**)&output, 32 * sizeof(int));
    cudaMemset(global_data, 0, 32 * sizeof(int));

    bank_broadcast<<<1, 32>>>(global_data, output);
    cudaDeviceSynchronize();

    cudaFree(global_data);
    cudaFree(output);
    return 0;
}
