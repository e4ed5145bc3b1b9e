// Argument checks of kiln's PyTorch ops: each failure raises a Python exception (ValueError or
// TypeError through TORCH_CHECK_VALUE / TORCH_CHECK_TYPE) that names the op, the argument and what
// is accepted, before any GPU work.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "core/dtype.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::torch_ops {

// bf16 or fp16 on a CUDA device (the current one), at least 2-D.
void check_matrix_operand(const std::string& op, const std::string& name, const at::Tensor& t);
// Same dtype and device as `a`.
void check_same_kind(const std::string& op, const std::string& name, const at::Tensor& t,
                     const at::Tensor& a);
core::DType kiln_dtype(const at::Tensor& t);

// B (K×N in PyTorch's A @ B) as the runtime takes it: its data, layout and a contiguous copy
// where B is neither K×N row-major nor the transpose of an N×K row-major matrix (nn.Linear's
// weight.t()).
struct WeightView {
  at::Tensor storage;  // keeps the (possibly copied) data alive
  overlap::WeightLayout layout = overlap::WeightLayout::kKN;
  int k = 0, n = 0;
};
WeightView weight_view(const std::string& op, const std::string& name, const at::Tensor& b,
                       int64_t k);
// `w` in `layout`: `w` itself when it is already, else a copy (see tensor_checks.cpp for the cost).
WeightView with_layout(const WeightView& w, overlap::WeightLayout layout);

// Refuses a capture in progress on `stream`: the runtime's waits on counters and its NCCL calls
// per wave group are not graph-safe.
void refuse_graph_capture(const std::string& op);

// A 2-D row-major view of A's leading dimensions flattened (a copy when A is not contiguous).
at::Tensor rows_of(const at::Tensor& a);

}  // namespace kiln::torch_ops
