// Seed 002 ("通过transpose_kernel.cu 理解Memory BANK Conflict和Coalescing") names the
// two kernels of the classic CUDA SDK sample transpose_kernel.cu: transpose_naive
// and transpose. The article prints only `transpose` (002_transpose_tiled_padded.cu);
// this is the naive one as the classic sample writes it: the read of idata is
// row-wise (coalesced), the write of odata is column-wise (each thread of a row of
// the block writes to a different row of odata).
// The input is `height` rows of `width` floats; the output `width` rows of `height`.
// Host code added (the article has none): a 16 x 16 block, one thread per element.
#include <cuda_runtime.h>

#define BLOCK_DIM 16

__global__ void transpose_naive(float *odata, float *idata, int width, int height)
{
    unsigned int xIndex = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int yIndex = blockDim.y * blockIdx.y + threadIdx.y;

    if (xIndex < width && yIndex < height)
    {
        unsigned int index_in  = xIndex + width * yIndex;
        unsigned int index_out = yIndex + height * xIndex;
        odata[index_out] = idata[index_in];
    }
}

int main()
{
    const int width = 1024, height = 512;
    float *idata, *odata;
    cudaMalloc((void**)&idata, width * height * sizeof(float));
    cudaMalloc((void**)&odata, width * height * sizeof(float));
    cudaMemset(idata, 0, width * height * sizeof(float));

    dim3 grid(width / BLOCK_DIM, height / BLOCK_DIM, 1);
    dim3 threads(BLOCK_DIM, BLOCK_DIM, 1);
    transpose_naive<<<grid, threads>>>(odata, idata, width, height);
    cudaDeviceSynchronize();

    cudaFree(idata);
    cudaFree(odata);
    return 0;
}
