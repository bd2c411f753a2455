#pragma once

#include "common.hpp"

void ggml_sycl_diag(ggml_backend_sycl_context & ctx, ggml_tensor * dst);
