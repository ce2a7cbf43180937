"""CUDA texts that several test modules check (imported by name: pytest puts tests/ on the path)."""

# A kernel with nothing to report: one coalesced copy, launched with a literal configuration.
CLEAN_KERNEL = """\
__global__ void copy(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

int main()
{
    float *in, *out;
    int n = 1 << 20;
    copy<<<n / 256, 256>>>(in, out, n);
    return 0;
}
"""
