// Kernels of the element-wise kb1 problems (see kb1_elementwise_kernels.hpp). The formulas are
// PyTorch's definitions of each function (torch.nn.functional documentation).
#include <cmath>

#include "core/cuda_check.hpp"
#include "problems/kb1_elementwise_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;

template <UnaryOp Op>
__device__ __forceinline__ float apply(float x) {
  if constexpr (Op == UnaryOp::kScale314) return x * 3.14f;
  if constexpr (Op == UnaryOp::kRelu) return x > 0.0f ? x : 0.0f;
  if constexpr (Op == UnaryOp::kLeakyRelu) return x > 0.0f ? x : 0.01f * x;
  if constexpr (Op == UnaryOp::kSigmoid) return 1.0f / (1.0f + expf(-x));
  if constexpr (Op == UnaryOp::kTanh) return tanhf(x);
  if constexpr (Op == UnaryOp::kSwish) return x / (1.0f + expf(-x));
  if constexpr (Op == UnaryOp::kGelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  if constexpr (Op == UnaryOp::kSelu) return kSeluScale * (x > 0.0f ? x : kSeluAlpha * expm1f(x));
  if constexpr (Op == UnaryOp::kHardSigmoid) return fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
  if constexpr (Op == UnaryOp::kSoftplus) return x > 20.0f ? x : log1pf(expf(x));
  if constexpr (Op == UnaryOp::kSoftsign) return x / (1.0f + fabsf(x));
  if constexpr (Op == UnaryOp::kElu) return x > 0.0f ? x : expm1f(x);
  if constexpr (Op == UnaryOp::kHardTanh) return fminf(fmaxf(x, -1.0f), 1.0f);
  if constexpr (Op == UnaryOp::kNewGelu) {
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  return x;
}

template <UnaryOp Op>
__global__ void unary_reference(const float* x, float* y, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) y[i] = apply<Op>(x[i]);
}

// `head` scalar elements bring x to 16-byte alignment (y shares it or not: then the scalar
// loop does everything).
template <UnaryOp Op>
__global__ void unary_vectorized(const float* x, float* y, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const auto misalign = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; };
  std::int64_t head = static_cast<std::int64_t>((16 - misalign(x)) % 16 / 4);
  if (misalign(x) % 4 != 0 || misalign(x) != misalign(y)) head = count;  // no vector path
  head = head < count ? head : count;
  for (std::int64_t i = t; i < head; i += stride) y[i] = apply<Op>(x[i]);
  const std::int64_t vectors = (count - head) / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x + head);
  float4* y4 = reinterpret_cast<float4*>(y + head);
  for (std::int64_t v = t; v < vectors; v += stride) {
    const float4 a = x4[v];
    y4[v] = make_float4(apply<Op>(a.x), apply<Op>(a.y), apply<Op>(a.z), apply<Op>(a.w));
  }
  for (std::int64_t i = head + vectors * 4 + t; i < count; i += stride) y[i] = apply<Op>(x[i]);
}

template <UnaryOp Op>
void launch(bool vectorized, const float* x, float* y, std::int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  if (vectorized) {
    int sms = 0, device = 0;
    KILN_CUDA_CHECK(cudaGetDevice(&device));
    KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::int64_t wanted = (count / 4 + 255) / 256;
    const int blocks = static_cast<int>(wanted < sms * 16 ? (wanted < 1 ? 1 : wanted) : sms * 16);
    unary_vectorized<Op><<<blocks, 256, 0, stream>>>(x, y, count);
  } else {
    const std::int64_t blocks = (count + 255) / 256;
    KILN_REQUIRE(blocks < (1ll << 31), "unary reference: too many elements for one launch");
    unary_reference<Op><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, y, count);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

void dispatch(UnaryOp op, bool vectorized, const float* x, float* y, std::int64_t count,
              cudaStream_t stream) {
  switch (op) {
#define KILN_UNARY_CASE(name) \
  case UnaryOp::name:         \
    return launch<UnaryOp::name>(vectorized, x, y, count, stream);
    KILN_UNARY_CASE(kScale314)
    KILN_UNARY_CASE(kRelu)
    KILN_UNARY_CASE(kLeakyRelu)
    KILN_UNARY_CASE(kSigmoid)
    KILN_UNARY_CASE(kTanh)
    KILN_UNARY_CASE(kSwish)
    KILN_UNARY_CASE(kGelu)
    KILN_UNARY_CASE(kSelu)
    KILN_UNARY_CASE(kHardSigmoid)
    KILN_UNARY_CASE(kSoftplus)
    KILN_UNARY_CASE(kSoftsign)
    KILN_UNARY_CASE(kElu)
    KILN_UNARY_CASE(kHardTanh)
    KILN_UNARY_CASE(kNewGelu)
#undef KILN_UNARY_CASE
  }
}

}  // namespace

void launch_unary_reference(UnaryOp op, const float* x, float* y, std::int64_t count,
                            cudaStream_t stream) {
  dispatch(op, false, x, y, count, stream);
}

void launch_unary_kiln(UnaryOp op, const float* x, float* y, std::int64_t count,
                       cudaStream_t stream) {
  dispatch(op, true, x, y, count, stream);
}

double unary_host(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kScale314:
      return x * 3.14;
    case UnaryOp::kRelu:
      return x > 0 ? x : 0.0;
    case UnaryOp::kLeakyRelu:
      return x > 0 ? x : 0.01 * x;
    case UnaryOp::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kSwish:
      return x / (1.0 + std::exp(-x));
    case UnaryOp::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::kSelu:
      return 1.0507009873554804934193349852946 *
             (x > 0 ? x : 1.6732632423543772848170429916717 * std::expm1(x));
    case UnaryOp::kHardSigmoid:
      return std::fmin(std::fmax(x / 6.0 + 0.5, 0.0), 1.0);
    case UnaryOp::kSoftplus:
      return x > 20 ? x : std::log1p(std::exp(x));
    case UnaryOp::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case UnaryOp::kElu:
      return x > 0 ? x : std::expm1(x);
    case UnaryOp::kHardTanh:
      return std::fmin(std::fmax(x, -1.0), 1.0);
    case UnaryOp::kNewGelu:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

}  // namespace kiln::problems::kb1
