// A signaling GEMM that forwards to the real one except on the calls a test picks, where it
// throws (a failed launch) or launches nothing (a lost signal): installed through
// OverlapOptions::wrap_gemm (issue 18's defect tests and stress test).
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "overlap/signaling_gemm.hpp"

namespace kiln::testing {

class FaultyGemm final : public overlap::SignalingGemm {
 public:
  enum class Fault { kThrow, kSkip };
  // `faulty(call)` says whether call number `call` (1-based) fails.
  FaultyGemm(std::unique_ptr<overlap::SignalingGemm> inner, std::function<bool(int)> faulty,
             Fault fault)
      : inner_(std::move(inner)), faulty_(std::move(faulty)), fault_(fault) {}
  // Only the `at`-th call fails.
  FaultyGemm(std::unique_ptr<overlap::SignalingGemm> inner, int at, Fault fault)
      : FaultyGemm(
            std::move(inner), [at](int call) { return call == at; }, fault) {}

  core::DType dtype() const override { return inner_->dtype(); }
  overlap::WeightLayout weight_layout() const override { return inner_->weight_layout(); }
  overlap::GemmConfig config() const override { return inner_->config(); }
  overlap::LaunchGeometry geometry(const overlap::GemmShape& shape,
                                   const overlap::ScheduleOptions& s, int sms) const override {
    return inner_->geometry(shape, s, sms);
  }
  void run(const overlap::GemmShape& shape, const void* a, const void* b,
           const overlap::EpilogueTargets& targets, const overlap::ScheduleOptions& s, int sms,
           cudaStream_t stream) override {
    if (faulty_(++calls_)) {
      if (fault_ == Fault::kThrow) throw Error("injected GEMM launch failure");
      return;
    }
    inner_->run(shape, a, b, targets, s, sms, stream);
  }

 private:
  std::unique_ptr<overlap::SignalingGemm> inner_;
  std::function<bool(int)> faulty_;
  Fault fault_;
  int calls_ = 0;
};

}  // namespace kiln::testing
