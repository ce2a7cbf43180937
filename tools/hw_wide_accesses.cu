// Adjacent shared accesses that nvcc merges (or not) into one 64- or 128-bit access: the program
// measured on a GPU for docs/hardware-validation.md ("Wide accesses"), one kernel per case, the
// access under test on a line of its own. Launched with one warp of 32 threads; each kernel first
// fills its shared array from global memory so that nvcc cannot fold the loads away.
//   python3 tools/validate_hw.py measure --out build/wide tools/hw_wide_accesses.cu   (GPU machine)
//   python tools/validate_hw.py compare build/wide tools/hw_wide_accesses.cu          (here)
#define N 1024

__global__ void scan_pair(float *o, const float *in) {
    __shared__ float temp[64];
    int thid = threadIdx.x;
    temp[2 * thid] = in[2 * thid];
    temp[2 * thid + 1] = in[2 * thid + 1];
    __syncthreads();
    o[2 * thid] = temp[2 * thid];
    o[2 * thid + 1] = temp[2 * thid + 1];
}

__global__ void quad_load(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[4 * t] + s[4 * t + 1] + s[4 * t + 2] + s[4 * t + 3];
}

__global__ void triple_load(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[4 * t] + s[4 * t + 1] + s[4 * t + 2];
}

__global__ void pair_reversed(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[2 * t + 1] * s[2 * t];
}

__global__ void upper_pair(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[4 * t + 2] + s[4 * t + 3];
}

__global__ void pair_odd_start(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[2 * t + 1] + s[2 * t + 2];
}

__global__ void pair_with_gap(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[4 * t] + s[4 * t + 2];
}

__global__ void double_pair(double *o, const double *in) {
    __shared__ double s[512];
    int t = threadIdx.x;
    for (int i = t; i < 512; i += 32) s[i] = in[i];
    __syncthreads();
    o[t] = s[2 * t] + s[2 * t + 1];
}

__global__ void second_array(float *o, const float *in) {
    __shared__ float a[3];
    __shared__ float b[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) b[i] = in[i];
    if (t < 3) a[t] = in[t];
    __syncthreads();
    o[t] = a[t % 3] + b[2 * t] + b[2 * t + 1];
}

__global__ void split_by_store(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    float first = s[2 * t];
    s[t + 512] = first;
    o[t] = first + s[2 * t + 1];
}

__global__ void triple_store(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    s[4 * t] = in[t];
    s[4 * t + 1] = in[t + 32];
    s[4 * t + 2] = in[t + 64];
    __syncthreads();
    o[t] = s[t] + s[t + 32] + s[t + 64];
}

__global__ void partial_quad(float *o, const float *in) {
    __shared__ float s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += 32) s[i] = in[i];
    __syncthreads();
    if (t < 20)
        o[t] = s[4 * t] + s[4 * t + 1] + s[4 * t + 2] + s[4 * t + 3];
}

int main() {
    float *o, *in;
    double *od, *ind;
    cudaMalloc(&o, 4 * N * sizeof(float));
    cudaMalloc(&in, 4 * N * sizeof(float));
    cudaMalloc(&od, N * sizeof(double));
    cudaMalloc(&ind, N * sizeof(double));
    cudaMemset(in, 0, 4 * N * sizeof(float));
    cudaMemset(ind, 0, N * sizeof(double));
    scan_pair<<<1, 32>>>(o, in);
    quad_load<<<1, 32>>>(o, in);
    triple_load<<<1, 32>>>(o, in);
    pair_reversed<<<1, 32>>>(o, in);
    upper_pair<<<1, 32>>>(o, in);
    pair_odd_start<<<1, 32>>>(o, in);
    pair_with_gap<<<1, 32>>>(o, in);
    double_pair<<<1, 32>>>(od, ind);
    second_array<<<1, 32>>>(o, in);
    split_by_store<<<1, 32>>>(o, in);
    triple_store<<<1, 32>>>(o, in);
    partial_quad<<<1, 32>>>(o, in);
    cudaDeviceSynchronize();
    return 0;
}
