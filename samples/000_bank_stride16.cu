// Seed 000 ("CUDA入门:GPU的硬件架构", section Shared memory):
//     data[tid] = global_data[tid];
//     ...
//     int number = data[16 * tid];
// Word stride 16: "causes a serious bank conflict".
// Added to make it a complete program: tid = threadIdx.x, the size of `data`
// (the article gives none here; 16 * 32 ints covers data[16 * tid] for the 32
// threads of the launch), __syncthreads() for the article's "...", and a store of
// `number`. Words of data[] that no thread wrote are read as they are.
#include <cuda_runtime.h>

__global__ void bank_stride16(const int* global_data, int* output)
{
    __shared__ int data[16 * 32];
    int tid = threadIdx.x;

    data[tid] = global_data[tid];
    __syncthreads();

    int number = data[16 * tid];
    output[tid] = number;
}

int main()
{
    int *global_data, *output;
    cudaMalloc((void**)&global_data, 32 * sizeof(int));
    cudaMalloc((void**)&output, 32 * sizeof(int));
    cudaMemset(global_data, 0, 32 * sizeof(int));

    bank_stride16<<<1, 32>>>(global_data, output);
    cudaDeviceSynchronize();

    cudaFree(global_data);
    cudaFree(output);
    return 0;
}
