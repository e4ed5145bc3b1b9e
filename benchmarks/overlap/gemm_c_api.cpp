// A C interface to kiln's two GEMMs, for timing them in the same process as PyTorch (issue 17):
// scripts/torch_gemm_same_process.py loads libkiln_gemm_capi.so with ctypes and interleaves
// torch.matmul, kiln's cuBLAS baseline and kiln's signaling GEMM round by round on the same
// stream, inputs and clock state, which two processes timed one after the other cannot give
// (docs/results/2026-11-24-gemm-baseline/, runs 1 and 3). Every function returns 0 on success;
// otherwise kiln_gemm_last_error() says why. Pointers are device pointers; `stream` a cudaStream_t.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include <exception>
#include <memory>
#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/plain_gemm.hpp"
#include "overlap/plan.hpp"
#include "overlap/reorder_kernels.hpp"
#include "tune/gemm_config_search.hpp"

namespace {

thread_local std::string last_error;

struct GemmPair {
  kiln::core::DType dtype;
  kiln::overlap::WeightLayout layout;
  kiln::overlap::GemmShape shape;
  kiln::overlap::CublasGemm cublas;
  std::unique_ptr<kiln::overlap::SignalingGemm> gemm;
  std::unique_ptr<kiln::overlap::PlainCutlassGemm> plain;  // made on first use (bf16, nk only)
  kiln::overlap::ScheduleOptions schedule;
  std::unique_ptr<kiln::tune::StandaloneTargets> targets;
  kiln::overlap::EpilogueTargets signalled;
  int sms = 0;
  std::string description;
  std::string ranking;  // the search's ranking, one candidate per line (empty for a given plan)
};

template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}

}  // namespace

// Only these functions leave the library (it is built with hidden visibility).
#define KILN_CAPI extern "C" __attribute__((visibility("default")))

KILN_CAPI const char* kiln_gemm_last_error() {
  return last_error.c_str();
}

// dtype: "bf16" | "fp16"; layout: "nk" | "kn"; plan: "" to search every configuration on a and b
// (tune/gemm_config_search.hpp), "search:KEY=N,..." to search with other options
// (parse_gemm_search_options; the same-process script's A/B of search settings), else a plan text
// whose tile/cluster/kernel/raster/swizzle/cap and signal (eager or deferred) are used; a search
// times eager signals. The cuBLAS baseline picks its algorithm here too. *handle receives the
// pair.
KILN_CAPI int kiln_gemm_create(const char* dtype, const char* layout, int m, int n, int k,
                               const char* plan, const void* a, const void* b, void* stream,
                               void** handle) {
  return guarded([&] {
    auto p = std::make_unique<GemmPair>();
    p->dtype = kiln::core::parse_dtype(dtype, "dtype");
    p->layout = kiln::overlap::parse_weight_layout(layout, "layout");
    p->shape = {m, n, k};
    p->sms = kiln::overlap::current_device_sms();
    const auto s = static_cast<cudaStream_t>(stream);
    kiln::overlap::GemmConfig config;
    std::string chosen;
    bool deferred_signal = false;
    const std::string text = plan == nullptr ? "" : plan;
    const std::string search = "search:";
    if (text.empty() || text.starts_with(search)) {
      const kiln::tune::GemmSearchOptions options =
          text.empty() ? kiln::tune::GemmSearchOptions{}
                       : kiln::tune::parse_gemm_search_options(text.substr(search.size()));
      const auto ranked =
          kiln::tune::search_gemm_configs(p->shape, p->dtype, p->layout, a, b, options, s);
      config = ranked.front().config;
      p->schedule = ranked.front().schedule;
      chosen = kiln::tune::candidate_name(ranked.front()) + " (searched)";
      for (const kiln::tune::GemmCandidate& c : ranked) {
        p->ranking += fmt::format("{} {:.1f} {:.1f} {:.4f} {}\n", c.stage, c.us.median, c.us.min,
                                  c.us.cv, kiln::tune::candidate_name(c));
      }
    } else {
      const kiln::overlap::Plan given = kiln::overlap::parse_plan(plan, "plan");
      config = given.gemm;
      p->schedule = given.schedule;
      deferred_signal = given.deferred_signal;
      chosen = kiln::overlap::to_string(given) + " (given)";
    }
    p->gemm = kiln::overlap::make_signaling_gemm(p->dtype, p->layout, config);
    p->targets =
        std::make_unique<kiln::tune::StandaloneTargets>(*p->gemm, p->shape, p->schedule, p->sms, 2);
    p->signalled = p->targets->signalling(deferred_signal);
    kiln::core::DeviceBuffer c(static_cast<std::size_t>(m) * n * 2);
    p->cublas.run(m, n, k, p->dtype, p->layout, a, b, c.data(), s);  // picks its algorithm
    KILN_CUDA_CHECK(cudaStreamSynchronize(s));
    p->description =
        "kiln: " + chosen + "; baseline: " + p->cublas.chosen(m, n, k, p->dtype, p->layout);
    *handle = p.release();
  });
}

KILN_CAPI const char* kiln_gemm_describe(void* handle) {
  return static_cast<GemmPair*>(handle)->description.c_str();
}

// The search's ranking, best first, one line per candidate: "STAGE MEDIAN_US MIN_US CV NAME"
// (STAGE 3: timed under sustained load, 2: finalist, 1: screened; times of different stages are
// not comparable); NAME is a plan text kiln_gemm_create accepts. Empty when the plan was given.
KILN_CAPI const char* kiln_gemm_ranking(void* handle) {
  return static_cast<GemmPair*>(handle)->ranking.c_str();
}

// c = a·op(b) by kiln's cuBLAS baseline (row-major c).
KILN_CAPI int kiln_gemm_run_baseline(void* handle, const void* a, const void* b, void* c,
                                     void* stream) {
  return guarded([&] {
    auto* p = static_cast<GemmPair*>(handle);
    p->cublas.run(p->shape.m, p->shape.n, p->shape.k, p->dtype, p->layout, a, b, c,
                  static_cast<cudaStream_t>(stream));
  });
}

// c (row-major) = a·op(b) by the signaling GEMM's CUTLASS twin: the same configuration and
// schedule with CUTLASS's own epilogue (overlap/plain_gemm.hpp), so that a profile splits kiln's
// gap to cuBLAS into the main loop's part and the epilogue's. bf16 with B stored N×K only.
KILN_CAPI int kiln_gemm_run_plain(void* handle, const void* a, const void* b, void* c,
                                  void* stream) {
  return guarded([&] {
    auto* p = static_cast<GemmPair*>(handle);
    if (!p->plain) {
      p->plain = kiln::overlap::make_plain_cutlass_gemm(p->dtype, p->layout, p->gemm->config());
    }
    p->plain->run(p->shape, a, b, c, p->schedule, p->sms, static_cast<cudaStream_t>(stream));
  });
}

// The signaling GEMM with its per-tile signal, into the pair's slot buffer (execution order).
KILN_CAPI int kiln_gemm_run_signaling(void* handle, const void* a, const void* b, void* stream) {
  return guarded([&] {
    auto* p = static_cast<GemmPair*>(handle);
    p->gemm->run(p->shape, a, b, p->signalled, p->schedule, p->sms,
                 static_cast<cudaStream_t>(stream));
  });
}

// The last signaling GEMM's result restored to row-major c (for checking it).
KILN_CAPI int kiln_gemm_restore(void* handle, void* c, void* stream) {
  return guarded([&] {
    auto* p = static_cast<GemmPair*>(handle);
    const kiln::overlap::ReorderSource source{
        p->targets->targets.slots, p->targets->slot_of_tile.as<int>(), p->targets->geometry, 0};
    kiln::overlap::restore_row_major(source, p->dtype, p->shape.m, p->shape.n, c,
                                     static_cast<cudaStream_t>(stream));
  });
}

KILN_CAPI void kiln_gemm_destroy(void* handle) {
  delete static_cast<GemmPair*>(handle);
}
