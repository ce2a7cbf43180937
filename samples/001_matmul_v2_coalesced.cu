// Seed 001 ("关于GPU你需要了解的那些事", V2: Global Memory Coalescing), the reference
// implementation the article quotes: a 1-D block of BLOCK_SIZE * BLOCK_SIZE = 1024
// threads; threadIdx.x / BLOCK_SIZE gives the row x (one value per warp) and
// threadIdx.x % BLOCK_SIZE the column y (consecutive across a warp), so a warp
// computes part of a ROW of `out`: a[x * N + k] is one address per warp and
// b[k * P + y], out[x * P + y] are consecutive.
// The article elides the body ("......"); it is completed here as V1's body with
// these x and y. Added to make it a complete program: scalar_t as a typedef of
// float, the includes, MatmulCoreV2 (launch as V1's, with the 1-D block) and main().
#include <cuda_runtime.h>
#include <cstdint>
#include <cmath>

typedef float scalar_t;

constexpr uint32_t BLOCK_SIZE = 32;

__global__ void MatmulKernelV2(const scalar_t *a, const scalar_t *b, scalar_t *out, uint32_t M, uint32_t N, uint32_t P) {
    // 相当于首先把OUT分成若干个32*32的Block,V1和V2都是如此,它们的区别在于Block内部的分配方式
    // 这里blockIdx.x * BLOCK_SIZE, blockIdx.y * BLOCK_SIZE 就是在定位Block的起始x和y
    const uint32_t x = blockIdx.x * BLOCK_SIZE + threadIdx.x / BLOCK_SIZE;
    const uint32_t y = blockIdx.y * BLOCK_SIZE + threadIdx.x % BLOCK_SIZE;
    // completed from V1 (elided in the article)
    if (x < M && y < P) {
        scalar_t tmp = 0;
        for (uint32_t k = 0; k < N; k++) {
            // out[i][j] = a[i][k] * b[k][j]
            tmp += a[x * N + k] * b[k * P + y];
        }
        out[x * P + y] = tmp;
    }
}

void MatmulCoreV2(const scalar_t *a, const scalar_t *b, scalar_t *out, uint32_t M, uint32_t N, uint32_t P) {
    dim3 grid(std::ceil(M / 32.0), std::ceil(P / 32.0), 1);
    dim3 block(1024, 1, 1);  // BLOCK_SIZE * BLOCK_SIZE
    MatmulKernelV2<<<grid, block>>>(a, b, out, M, N, P);
}

int main()
{
    const uint32_t M = 4096, N = 4096, P = 4096;
    scalar_t *a, *b, *out;
    cudaMalloc((void**)&a, (size_t)M * N * sizeof(scalar_t));
    cudaMalloc((void**)&b, (size_t)N * P * sizeof(scalar_t));
    cudaMalloc((void**)&out, (size_t)M * P * sizeof(scalar_t));
    cudaMemset(a, 0, (size_t)M * N * sizeof(scalar_t));
    cudaMemset(b, 0, (size_t)N * P * sizeof(scalar_t));

    MatmulCoreV2(a, b, out, M, N, P);
    cudaDeviceSynchronize();

    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
    return 0;
}
