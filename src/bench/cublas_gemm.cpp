// cuBLAS GEMM baseline (see cublas_gemm.hpp). Row-major C = A·op(B) is computed as the
// column-major Cᵀ = op(B)ᵀ·Aᵀ, which cublasLt takes without copies.
#include "bench/cublas_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/cublas_check.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"

namespace kiln::bench {

struct CublasGemm::ShapePlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t weight = nullptr, activations = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::string description;
  ~ShapePlan() {
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
    if (weight != nullptr) cublasLtMatrixLayoutDestroy(weight);
    if (activations != nullptr) cublasLtMatrixLayoutDestroy(activations);
    if (out != nullptr) cublasLtMatrixLayoutDestroy(out);
  }
};

CublasGemm::CublasGemm(int candidates)
    : candidates_(std::max(candidates, 1)), workspace_(kWorkspaceBytes) {
  KILN_CUBLAS_CHECK(cublasLtCreate(&handle_));
}

CublasGemm::~CublasGemm() {
  plans_.clear();
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

CublasGemm::ShapePlan& CublasGemm::plan_for(int m, int n, int k, core::DType dtype,
                                            overlap::WeightLayout layout, const void* a,
                                            const void* b, void* c, cudaStream_t stream) {
  const Key key{m, n, k, static_cast<int>(dtype), static_cast<int>(layout)};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    throw UsageError("cuBLAS baseline: dtype " + core::dtype_name(dtype) + "; accepted bf16, fp16");
  }
  const cudaDataType_t type = dtype == core::DType::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  auto p = std::make_unique<ShapePlan>();
  KILN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // B stored N×K row-major is K×N column-major (ld K): transpose it. K×N row-major is N×K
  // column-major (ld N): use as is.
  const bool nk = layout == overlap::WeightLayout::kNK;
  const cublasOperation_t trans_weight = nk ? CUBLAS_OP_T : CUBLAS_OP_N;
  KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                   &trans_weight, sizeof(trans_weight)));
  KILN_CUBLAS_CHECK(nk ? cublasLtMatrixLayoutCreate(&p->weight, type, k, n, k)
                       : cublasLtMatrixLayoutCreate(&p->weight, type, n, k, n));
  KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->activations, type, k, m, k));
  KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->out, type, n, m, n));

  cublasLtMatmulPreference_t preference = nullptr;
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::size_t workspace = kWorkspaceBytes;
  KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  std::vector<cublasLtMatmulHeuristicResult_t> results(candidates_);
  int found = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(handle_, p->op, p->weight, p->activations, p->out, p->out,
                                     preference, candidates_, results.data(), &found);
  cublasLtMatmulPreferenceDestroy(preference);
  KILN_CUBLAS_CHECK(heuristic);
  if (found == 0) {
    throw Error(fmt::format("cuBLAS baseline: cublasLt has no algorithm for {}x{}x{}", m, n, k));
  }
  // Time each candidate on the caller's buffers (the output is overwritten by every run anyway):
  // 2 warm-ups, then the median of 5. One that fails to run is skipped.
  const float alpha = 1.0f, beta = 0.0f;
  const auto launch = [&](const cublasLtMatmulAlgo_t& algo) {
    return cublasLtMatmul(handle_, p->op, &alpha, b, p->weight, a, p->activations, &beta, c, p->out,
                          c, p->out, &algo, workspace_.data(), kWorkspaceBytes, stream);
  };
  int best = -1;
  float best_ms = 0.0f, first_ms = -1.0f;
  for (int i = 0; i < (found > 1 && candidates_ > 1 ? found : 0); ++i) {
    bool ok = true;
    for (int w = 0; w < 2 && ok; ++w) ok = launch(results[i].algo) == CUBLAS_STATUS_SUCCESS;
    if (!ok) continue;
    std::vector<float> ms;
    for (int r = 0; r < 5; ++r) {
      core::Event start, stop;
      start.record(stream);
      KILN_CUBLAS_CHECK(launch(results[i].algo));
      stop.record(stream);
      KILN_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      ms.push_back(stop.elapsed_ms_since(start));
    }
    std::sort(ms.begin(), ms.end());
    if (i == 0) first_ms = ms[2];
    if (best < 0 || ms[2] < best_ms) {
      best = i;
      best_ms = ms[2];
    }
  }
  if (best < 0) best = 0;
  p->algo = results[best].algo;
  int algo_id = 0;
  std::size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&p->algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof(algo_id),
                                       &written);
  if (best_ms <= 0) {
    p->description = fmt::format("cublasLt algo {} (the heuristic's first)", algo_id);
  } else {
    p->description = fmt::format("cublasLt algo {} (fastest of {} candidates, {:.1f} us", algo_id,
                                 found, 1000.0 * best_ms);
    if (first_ms > 0) {
      p->description += fmt::format("; the heuristic's first {:.1f} us", 1000.0 * first_ms);
    }
    p->description += ")";
  }
  return *plans_.emplace(key, std::move(p)).first->second;
}

void CublasGemm::run(int m, int n, int k, core::DType dtype, overlap::WeightLayout layout,
                     const void* a, const void* b, void* c, cudaStream_t stream) {
  ShapePlan& p = plan_for(m, n, k, dtype, layout, a, b, c, stream);
  const float alpha = 1.0f, beta = 0.0f;
  KILN_CUBLAS_CHECK(cublasLtMatmul(handle_, p.op, &alpha, b, p.weight, a, p.activations, &beta, c,
                                   p.out, c, p.out, &p.algo, workspace_.data(), kWorkspaceBytes,
                                   stream));
}

std::string CublasGemm::chosen(int m, int n, int k, core::DType dtype,
                               overlap::WeightLayout layout) const {
  const auto it = plans_.find(Key{m, n, k, static_cast<int>(dtype), static_cast<int>(layout)});
  return it == plans_.end() ? std::string() : it->second->description;
}

}  // namespace kiln::bench
