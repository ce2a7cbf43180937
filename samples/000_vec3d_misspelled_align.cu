// DELIBERATELY DOES NOT COMPILE.
// The seed articles misspell CUDA's __align__(n) specifier:
//   - seed 000 (prose): "可以使用 __align(n)__ 的指示" (its code then spells it right:
//     struct __align__(16) vec3d, see 000_vec3d_aligned16.cu);
//   - seed 004 (code): struct __align(8)__ { float a; float b; };
//                      struct __align(16)__ { float a; float b; float c; float d; };
// This file applies the misspelling to the vec3d kernel of seed 000, and keeps
// seed 004's __align(8)__ struct verbatim. `__align` is no macro or keyword, so
// nvcc rejects both declarations ("expected an identifier" / "expected a ;").
// The correct spelling is __align__(8) / __align__(16).
#include <cuda_runtime.h>

#define THREAD_NUM 256

struct __align(8)__ {
    float a;
    float b;
    };

struct __align(16)__ vec3d { float x, y, z; };

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

    func<<<1, THREAD_NUM>>>(data, output);
    cudaDeviceSynchronize();

    cudaFree(data);
    cudaFree(output);
    return 0;
}
