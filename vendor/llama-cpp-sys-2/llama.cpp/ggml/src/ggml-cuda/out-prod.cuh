#include "common.cuh"

void ggml_cuda_out_prod(ggml_backend_cuda_context & ctx, ggml_tensor * dst);
