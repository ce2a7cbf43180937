// Seed 000 ("CUDA入门:GPU的硬件架构", section Global memory):
//     if(tid != 3) {
//         int number = data[tid];
//     }
// Thread 3 reads nothing; the other threads' reads stay coalesced.
// Here `data` is global memory. Added to make it a complete program:
// tid = threadIdx.x and a store of `number` (inside the branch).
#include <cuda_runtime.h>

__global__ void masked_read(const int* data, int* output)
{
    int tid = threadIdx.x;
    if(tid != 3) {
        int number = data[tid];
        output[tid] = number;
    }
}

int main()
{
    int *data, *output;
    cudaMalloc((void**)&data, 32 * sizeof(int));
    cudaMalloc((void**)&output, 32 * sizeof(int));
    cudaMemset(data, 0, 32 * sizeof(int));

    masked_read<<<1, 32>>>(data, output);
    cudaDeviceSynchronize();

    cudaFree(data);
    cudaFree(output);
    return 0;
}
