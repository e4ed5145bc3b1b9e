// cuBLAS GEMM in kiln's convention (row-major A M×K, B stored N×K or K×N, row-major C M×N,
// fp32 accumulation): the baseline the signaling GEMM is held to, and the serial baseline of
// every overlap speedup. It is the best cuBLAS kiln can find, as PyTorch calls it: cublasLt with
// a workspace, the heuristic's top candidates timed once per shape, interleaved (PyTorch's
// TunableOp does the same), the best few and the heuristic's first timed again under sustained
// load (overlap/baseline_choice.hpp), and the fastest kept for the object's life; within 1% the
// heuristic's first, which is what torch.matmul runs.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

class CublasGemm {
 public:
  // The workspace cublasLt may use: PyTorch's default on Hopper (32 MiB).
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  // Heuristic candidates timed per shape (0 or 1: take the heuristic's first without timing).
  explicit CublasGemm(int candidates = 8);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // c (ldc = n) = a · op(b) for the rows [0, m) of a and c; `m` may be a chunk of the full shape.
  // The first call for a shape (m, n, k, dtype, layout) times the candidates on these buffers
  // (synchronising `stream`): make it outside any timed region, as every warm-up does. With one
  // candidate it neither times nor synchronises (torch.matmul's choice; capturable).
  void run(int m, int n, int k, core::DType dtype, WeightLayout layout, const void* a,
           const void* b, void* c, cudaStream_t stream);

  // The algorithm chosen for a shape already run, e.g. "cublasLt algo 66 tile 33 stages 22
  // cluster 5 (fastest of 8 candidates, 812.4 us; the heuristic's first 830.1 us)"; "" before
  // its first run.
  std::string chosen(int m, int n, int k, core::DType dtype, WeightLayout layout) const;

 private:
  struct ShapePlan;
  using Key = std::tuple<int, int, int, int, int>;
  ShapePlan& plan_for(int m, int n, int k, core::DType dtype, WeightLayout layout, const void* a,
                      const void* b, void* c, cudaStream_t stream);

  int candidates_;
  cublasLtHandle_t handle_ = nullptr;
  core::DeviceBuffer workspace_;
  std::map<Key, std::unique_ptr<ShapePlan>> plans_;
};

}  // namespace kiln::overlap
