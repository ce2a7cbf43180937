// Seed 002 ("通过transpose_kernel.cu 理解Memory BANK Conflict和Coalescing"): the
// optimised `transpose` of the classic SDK sample transpose_kernel.cu, as the article
// prints it (its Chinese comments kept). A BLOCK_DIM x (BLOCK_DIM+1) shared tile:
// the extra column is meant to avoid bank conflicts when the tile is read
// column-wise, and both global accesses are row-wise (coalesced).
// Added to make it a complete program: BLOCK_DIM as a #define (16, as in the SDK
// sample) and host code (the article has none).
#include <cuda_runtime.h>

#define BLOCK_DIM 16

__global__ void transpose(float *odata, float *idata, int width, int height)
{
  //每个ThreadBlock分配了一个同样大小的share memory块,其中增加了一列空白数据避免bank conflict
  __shared__ float block[BLOCK_DIM][BLOCK_DIM+1];

  //根据ThreadBlock坐标和Thread坐标按照行主序的次序读取矩阵元素到share memory块中
  //此时ThreadBlock坐标和Thread坐标都没有发生转置
  unsigned int xIndex = blockIdx.x * BLOCK_DIM + threadIdx.x;
  unsigned int yIndex = blockIdx.y * BLOCK_DIM + threadIdx.y;
  //没有发生转置,所以xIndex的边界是width,yIndex的边界是height
  if((xIndex < width) && (yIndex < height))
    {
      unsigned int index_in = yIndex * width + xIndex;
      block[threadIdx.y][threadIdx.x] = idata[index_in];
    }

  //等待ThreadBlock中的所有线程完成上面的步骤
  __syncthreads();

  //这一步非常重要且最难理解:将ThreadBlock坐标系进行转置,而Thread坐标系保持不变
  //在这样的情况下blockIdx.y 和 threadIdx.x都是x轴方向,blockIdx.x和threadIdx.y都是y轴方向
  xIndex = blockIdx.y * BLOCK_DIM + threadIdx.x;
  yIndex = blockIdx.x * BLOCK_DIM + threadIdx.y;
  //在上面的坐标系转置条件下,xIndex的边界是height,yIndex的边界是width了
  if((xIndex < height) && (yIndex < width))
    {
      //由于threadIdx.x是变化快的方向,所以xIndex连续变化可以确保index_out访问连续地址空间
      //从而通过memory coalescing提升性能
      unsigned int index_out = yIndex * height + xIndex;
      //这一步也很重要且也难以理解:访问share memory块的行列和输出矩阵的行列要颠倒
      //这样做的目的是将share memory块做转置后写入输出矩阵
      //从而实现了ThreadBlock和Block内的元素都发生转置,整个输入矩阵都转置的目标
      odata[index_out] = block[threadIdx.x][threadIdx.y];
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
    transpose<<<grid, threads>>>(odata, idata, width, height);
    cudaDeviceSynchronize();

    cudaFree(idata);
    cudaFree(odata);
    return 0;
}
