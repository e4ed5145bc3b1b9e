// Argument checks of kiln's PyTorch ops (see tensor_checks.hpp).
#include "tensor_checks.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>

namespace kiln::torch_ops {

void check_matrix_operand(const std::string& op, const std::string& name, const at::Tensor& t) {
  TORCH_CHECK_TYPE(t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf, op, ": ", name,
                   " must be bfloat16 or float16, got ", t.scalar_type());
  TORCH_CHECK_VALUE(t.is_cuda(), op, ": ", name, " must be on a CUDA device, got ", t.device());
  TORCH_CHECK_VALUE(t.get_device() == c10::cuda::current_device(), op, ": ", name,
                    " is on cuda:", t.get_device(),
                    " but the current device (the group's) is cuda:", c10::cuda::current_device());
  TORCH_CHECK_VALUE(t.dim() >= 2, op, ": ", name, " must have at least 2 dimensions, got ",
                    t.dim());
  TORCH_CHECK_VALUE(t.numel() > 0, op, ": ", name, " is empty (shape ", t.sizes(), ")");
}

void check_same_kind(const std::string& op, const std::string& name, const at::Tensor& t,
                     const at::Tensor& a) {
  TORCH_CHECK_TYPE(t.scalar_type() == a.scalar_type(), op, ": ", name, " must have A's dtype ",
                   a.scalar_type(), ", got ", t.scalar_type());
  TORCH_CHECK_VALUE(t.device() == a.device(), op, ": ", name, " must be on A's device ", a.device(),
                    ", got ", t.device());
}

core::DType kiln_dtype(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 ? core::DType::kBf16 : core::DType::kFp16;
}

WeightView weight_view(const std::string& op, const std::string& name, const at::Tensor& b,
                       int64_t k) {
  TORCH_CHECK_VALUE(b.dim() == 2, op, ": ", name, " must be 2-D (K x N), got shape ", b.sizes());
  TORCH_CHECK_VALUE(b.size(0) == k, op, ": ", name, " has ", b.size(0), " rows but A has K = ", k,
                    " columns (A @ B needs B of K x N)");
  TORCH_CHECK_VALUE(b.size(1) <= INT32_MAX && k <= INT32_MAX, op, ": ", name,
                    " is too large for kiln's GEMM (dimensions up to 2^31 - 1)");
  WeightView v;
  v.k = static_cast<int>(k);
  v.n = static_cast<int>(b.size(1));
  if (b.stride(1) == 1 && b.stride(0) == b.size(1)) {  // K x N row-major
    v.storage = b;
    v.layout = overlap::WeightLayout::kKN;
  } else if (b.stride(0) == 1 && b.stride(1) == k) {  // the transpose of N x K row-major
    v.storage = b;
    v.layout = overlap::WeightLayout::kNK;
  } else {
    v.storage = b.contiguous();
    v.layout = overlap::WeightLayout::kKN;
  }
  return v;
}

// A cached overlap object runs B in the layout its first call fixed (rank 0's, on every rank). A
// call whose B comes in the other layout pays, on each such call, a transposing copy of K x N
// elements (2 x K x N x element bytes through HBM: 64 MiB for a 4096 x 4096 bf16 B, tens of
// microseconds on an H100) and its allocation from PyTorch's caching allocator; no collective is
// needed for it. A B that was in neither layout has been copied to K x N by weight_view already,
// and is copied again when the object wants N x K. Passing B one way on every rank and call
// avoids all of it.
WeightView with_layout(const WeightView& w, overlap::WeightLayout layout) {
  if (w.layout == layout) return w;
  WeightView v = w;
  v.layout = layout;
  v.storage = layout == overlap::WeightLayout::kKN
                  ? w.storage.contiguous()           // K x N row-major
                  : w.storage.t().contiguous().t();  // K x N view of an N x K row-major copy
  return v;
}

void refuse_graph_capture(const std::string& op) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(at::cuda::getCurrentCUDAStream().stream(), &status));
  TORCH_CHECK(status == cudaStreamCaptureStatusNone, op,
              ": cannot be captured in a CUDA graph (kiln's overlap waits on counters the GEMM "
              "raises and issues one NCCL call per wave group from the host); call it outside "
              "the captured region");
}

at::Tensor rows_of(const at::Tensor& a) {
  return a.contiguous().view({-1, a.size(-1)});
}

}  // namespace kiln::torch_ops
