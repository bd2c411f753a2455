#include "common.cuh"

void ggml_cuda_op_fill(ggml_backend_cuda_context & ctx, ggml_tensor * dst);
