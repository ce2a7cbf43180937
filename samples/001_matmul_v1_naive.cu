// Seed 001 ("关于GPU你需要了解的那些事", V1: Naive Kernel). Matrices are row-major;
// x is the row index, y the column index. With dim3 block(32, 32, 1) the 32 lanes of
// a warp share threadIdx.y and take consecutive threadIdx.x, i.e. consecutive ROWS x:
// a warp computes part of a column of `out`, so a[x * N + k] and out[x * P + y] are
// strided by a whole row, while b[k * P + y] is one address for the whole warp.
// Added to make it a complete program: scalar_t as a typedef of float, the includes,
// and main() (the article's 4096 x 4096 matrices).
#include <cuda_runtime.h>
#include <cstdint>
#include <cmath>

typedef float scalar_t;

__global__ void MatmulKernelV1(const scalar_t *a, const scalar_t *b, scalar_t *out, uint32_t M, uint32_t N, uint32_t P) {
    uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < P) {
        scalar_t tmp = 0;
        for (uint32_t k = 0; k < N; k++) {
            // out[i][j] = a[i][k] * b[k][j]
            tmp += a[x * N + k] * b[k * P + y];
        }
        out[x * P + y] = tmp;
    }
}

void MatmulCoreV1(const scalar_t *a, const scalar_t *b, scalar_t *out, uint32_t M, uint32_t N, uint32_t P) {
    dim3 grid(std::ceil(M / 32.0), std::ceil(P / 32.0), 1);
    dim3 block(32, 32, 1);
    MatmulKernelV1<<<grid, block>>>(a, b, out, M, N, P);
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

    MatmulCoreV1(a, b, out, M, N, P);
    cudaDeviceSynchronize();

    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
    return 0;
}
