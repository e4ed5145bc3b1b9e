// The loss kb1 problems, after KernelBench level 1: cross entropy (95), Huber / smooth L1 (96),
// KL divergence (98), triplet margin (99) and hinge (100), each reduced to one fp32 scalar (the
// mean, or for 98 the sum over the batch size). Inputs differ per row (kb1_common.hpp), so no part
// of them gives the loss. Reference: a block per row in double, then the rows in order; solution
// "kiln": see kb1_loss_kernels.hpp. check_reference recomputes the whole loss on the host in
// double from the device inputs (up to 1G elements per input at the kb size), on several host
// threads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_loss_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

// What every loss run shares: a rows x cols shape, the two scalar outputs, the partials, the
// host check of the reference and the comparison.
class LossRun : public bench::ProblemRun {
 public:
  LossRun(const char* what, std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : what_(what),
        rows_(rows),
        cols_(cols),
        stream_(stream),
        reference_(sizeof(float)),
        solution_(sizeof(float)),
        partials_(sizeof(double) * kb1::loss_partials(rows)) {}
  void poison_outputs() override {
    core::poison(reference_.data(), sizeof(float), stream_);
    core::poison(solution_.data(), sizeof(float), stream_);
  }
  std::string check_reference() override {
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double want = host_loss();
    const float got = kb1::copy_floats(reference_.as<float>(), 0, 1)[0];
    if (std::fabs(got - want) <= kb1::kTolerance * std::fabs(want)) return "";
    return fmt::format("{} {:.9g} on the host, the reference wrote {:.9g}", what_, want, got);
  }
  std::string compare() override {
    return kb1::describe(kb1::compare_floats(solution_.as<float>(), reference_.as<float>(), 1,
                                             kb1::kTolerance, kb1::kTolerance, stream_),
                         1, kb1::kTolerance);
  }
  std::vector<OutputSpan> reference_outputs() override {
    return {{reference_.data(), reference_.bytes()}};
  }

 protected:
  // The loss in double on the host, from the device inputs (after the stream synchronised).
  virtual double host_loss() const = 0;
  // The sum over chunks of about 4M elements per array of visit(first row, row count, host
  // copies of those rows of each rows x cols array), the chunks on several host threads
  // (kb1::sum_over_chunks: the same double on any number of cores).
  template <typename Visit>
  double sum_row_chunks(std::initializer_list<const core::DeviceBuffer*> arrays,
                        Visit visit) const {
    const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{1} << 22) / cols_);
    const std::vector<const core::DeviceBuffer*> from(arrays);
    return kb1::sum_over_chunks((rows_ + chunk - 1) / chunk, [&](std::int64_t c) {
      const std::int64_t first = c * chunk, n = std::min(chunk, rows_ - first);
      std::vector<std::vector<float>> host;
      for (const core::DeviceBuffer* a : from)
        host.push_back(kb1::copy_floats(a->as<float>(), first * cols_, n * cols_));
      return visit(first, n, host);
    });
  }
  bench::CandidateBuffers buffers(std::initializer_list<const core::DeviceBuffer*> inputs) const {
    bench::CandidateBuffers b;
    for (const core::DeviceBuffer* input : inputs) {
      b.inputs.push_back(input->data());
      b.input_bytes.push_back(input->bytes());
    }
    b.peer_inputs = b.inputs;
    b.outputs = {solution_.data()};
    b.output_bytes = {sizeof(float)};
    return b;
  }
  float* reference_out() const { return reference_.as<float>(); }
  float* solution_out() const { return solution_.as<float>(); }
  double* partials() const { return partials_.as<double>(); }

  const char* what_;
  std::int64_t rows_, cols_;
  cudaStream_t stream_;

 private:
  core::DeviceBuffer reference_, solution_, partials_;
};

// 95: predictions (rows x classes logits, fp32; signed, row-varied), targets (rows class
// indices, int64, uniform in [0, classes)).
class CrossEntropyRun final : public LossRun {
 public:
  CrossEntropyRun(std::int64_t rows, std::int64_t classes, cudaStream_t stream)
      : LossRun("cross entropy", rows, classes, stream),
        x_(sizeof(float) * rows * classes),
        targets_(sizeof(std::int64_t) * rows) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(x_.as<float>(), rows_, cols_, seed, false, stream_);
    kb1::fill_classes(targets_.as<std::int64_t>(), rows_, cols_, core::mix64(seed + 1), stream_);
  }
  void reference() override {
    kb1::launch_cross_entropy_reference(x_.as<float>(), targets_.as<std::int64_t>(),
                                        reference_out(), partials(), rows_, cols_, stream_);
  }
  void solution(int) override {
    kb1::launch_cross_entropy_kiln(x_.as<float>(), targets_.as<std::int64_t>(), solution_out(),
                                   partials(), rows_, cols_, stream_);
  }
  bench::CandidateBuffers candidate_buffers() override { return buffers({&x_, &targets_}); }

 private:
  double host_loss() const override {
    std::vector<std::int64_t> targets(static_cast<std::size_t>(rows_));
    KILN_CUDA_CHECK(
        cudaMemcpy(targets.data(), targets_.data(), targets_.bytes(), cudaMemcpyDeviceToHost));
    const double sum =
        sum_row_chunks({&x_}, [&](std::int64_t first, std::int64_t n, const auto& host) {
          double sum = 0.0;
          for (std::int64_t i = 0; i < n; ++i) {
            const float* row = host[0].data() + i * cols_;
            const std::int64_t target = targets[static_cast<std::size_t>(first + i)];
            if (target < 0 || target >= cols_) {
              sum = NAN;  // out of range: PyTorch raises; the check fails
              continue;
            }
            double m = -INFINITY, s = 0.0;
            for (std::int64_t c = 0; c < cols_; ++c) m = std::max(m, static_cast<double>(row[c]));
            for (std::int64_t c = 0; c < cols_; ++c) s += std::exp(row[c] - m);
            sum += m + std::log(s) - row[target];
          }
          return sum;
        });
    return sum / static_cast<double>(rows_);
  }

  core::DeviceBuffer x_, targets_;
};

// 96: predictions and targets (rows x cols fp32 each; signed, row-varied, so |p - t| falls on
// both sides of beta = 1).
class HuberRun final : public LossRun {
 public:
  HuberRun(std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : LossRun("smooth L1 loss", rows, cols, stream),
        p_(sizeof(float) * rows * cols),
        t_(sizeof(float) * rows * cols) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(p_.as<float>(), rows_, cols_, seed, false, stream_);
    kb1::fill_row_varied(t_.as<float>(), rows_, cols_, core::mix64(seed + 1), false, stream_);
  }
  void reference() override {
    kb1::launch_huber_reference(p_.as<float>(), t_.as<float>(), reference_out(), partials(), rows_,
                                cols_, stream_);
  }
  void solution(int) override {
    kb1::launch_huber_kiln(p_.as<float>(), t_.as<float>(), solution_out(), partials(), rows_, cols_,
                           stream_);
  }
  bench::CandidateBuffers candidate_buffers() override { return buffers({&p_, &t_}); }

 private:
  double host_loss() const override {
    const double sum =
        sum_row_chunks({&p_, &t_}, [&](std::int64_t, std::int64_t, const auto& host) {
          double sum = 0.0;
          for (std::size_t i = 0; i < host[0].size(); ++i) {
            const double d = std::fabs(static_cast<double>(host[0][i]) - host[1][i]);
            sum += d < kb1::kHuberBeta ? 0.5 * d * d / kb1::kHuberBeta : d - 0.5 * kb1::kHuberBeta;
          }
          return sum;
        });
    return sum / (static_cast<double>(rows_) * static_cast<double>(cols_));
  }

  core::DeviceBuffer p_, t_;
};

// 98: predictions and targets (rows x cols fp32 each), every row a probability distribution: a
// softmax of positive row-varied values in (0, 32], so every probability is a normal fp32
// number (above ~1e-18: log(p) is finite, nothing underflows) and the rows differ.
class KlDivRun final : public LossRun {
 public:
  KlDivRun(std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : LossRun("kl_div batchmean", rows, cols, stream),
        p_(sizeof(float) * rows * cols),
        t_(sizeof(float) * rows * cols) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(p_.as<float>(), rows_, cols_, seed, true, stream_);
    kb1::fill_row_varied(t_.as<float>(), rows_, cols_, core::mix64(seed + 1), true, stream_);
    kb1::softmax_rows_in_place(p_.as<float>(), rows_, cols_, stream_);
    kb1::softmax_rows_in_place(t_.as<float>(), rows_, cols_, stream_);
  }
  void reference() override {
    kb1::launch_kl_div_reference(p_.as<float>(), t_.as<float>(), reference_out(), partials(), rows_,
                                 cols_, stream_);
  }
  void solution(int) override {
    kb1::launch_kl_div_kiln(p_.as<float>(), t_.as<float>(), solution_out(), partials(), rows_,
                            cols_, stream_);
  }
  bench::CandidateBuffers candidate_buffers() override { return buffers({&p_, &t_}); }

 private:
  double host_loss() const override {
    const double sum =
        sum_row_chunks({&p_, &t_}, [&](std::int64_t, std::int64_t, const auto& host) {
          double sum = 0.0;
          for (std::size_t i = 0; i < host[0].size(); ++i) {
            const double p = host[0][i], t = host[1][i];
            if (t > 0.0) sum += t * std::log(t / p);  // t (log t - log p); 0 where t = 0 (xlogy)
          }
          return sum;
        });
    return sum / static_cast<double>(rows_);
  }

  core::DeviceBuffer p_, t_;
};

// 99: anchor, positive, negative (rows x cols fp32 each; signed, row-varied).
class TripletRun final : public LossRun {
 public:
  TripletRun(std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : LossRun("triplet margin loss", rows, cols, stream),
        a_(sizeof(float) * rows * cols),
        p_(sizeof(float) * rows * cols),
        n_(sizeof(float) * rows * cols) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(a_.as<float>(), rows_, cols_, seed, false, stream_);
    kb1::fill_row_varied(p_.as<float>(), rows_, cols_, core::mix64(seed + 1), false, stream_);
    kb1::fill_row_varied(n_.as<float>(), rows_, cols_, core::mix64(seed + 2), false, stream_);
  }
  void reference() override {
    kb1::launch_triplet_reference(a_.as<float>(), p_.as<float>(), n_.as<float>(), reference_out(),
                                  partials(), rows_, cols_, stream_);
  }
  void solution(int) override {
    kb1::launch_triplet_kiln(a_.as<float>(), p_.as<float>(), n_.as<float>(), solution_out(),
                             partials(), rows_, cols_, stream_);
  }
  bench::CandidateBuffers candidate_buffers() override { return buffers({&a_, &p_, &n_}); }

 private:
  double host_loss() const override {
    const double sum =
        sum_row_chunks({&a_, &p_, &n_}, [&](std::int64_t, std::int64_t n, const auto& host) {
          double sum = 0.0;
          for (std::int64_t i = 0; i < n; ++i) {
            double sp = 0.0, sn = 0.0;
            for (std::int64_t c = 0; c < cols_; ++c) {
              const auto e = static_cast<std::size_t>(i * cols_ + c);
              // pairwise_distance: ||x1 - x2 + eps||_2.
              const double dp = static_cast<double>(host[0][e]) - host[1][e] + kb1::kTripletEps;
              const double dn = static_cast<double>(host[0][e]) - host[2][e] + kb1::kTripletEps;
              sp += dp * dp;
              sn += dn * dn;
            }
            sum += std::max(std::sqrt(sp) - std::sqrt(sn) + kb1::kTripletMargin, 0.0);
          }
          return sum;
        });
    return sum / static_cast<double>(rows_);
  }

  core::DeviceBuffer a_, p_, n_;
};

// 100: predictions (rows x cols fp32; signed, row-varied), targets (cols fp32 values in
// {-1, +1}). KernelBench's targets have shape (batch_size,) and predictions (batch_size, 32768);
// PyTorch broadcasting aligns trailing dimensions, so predictions * targets multiplies column c
// by targets[c] (it broadcasts only because batch_size == 32768: the vector runs along the row,
// not down the rows). That broadcast is implemented here: element (r, c) uses targets[c].
class HingeRun final : public LossRun {
 public:
  HingeRun(std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : LossRun("hinge loss", rows, cols, stream),
        p_(sizeof(float) * rows * cols),
        t_(sizeof(float) * cols) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(p_.as<float>(), rows_, cols_, seed, false, stream_);
    kb1::fill_signs(t_.as<float>(), cols_, core::mix64(seed + 1), stream_);
  }
  void reference() override {
    kb1::launch_hinge_reference(p_.as<float>(), t_.as<float>(), reference_out(), partials(), rows_,
                                cols_, stream_);
  }
  void solution(int) override {
    kb1::launch_hinge_kiln(p_.as<float>(), t_.as<float>(), solution_out(), partials(), rows_, cols_,
                           stream_);
  }
  bench::CandidateBuffers candidate_buffers() override { return buffers({&p_, &t_}); }

 private:
  double host_loss() const override {
    const std::vector<float> t = kb1::copy_floats(t_.as<float>(), 0, cols_);
    const double sum = sum_row_chunks({&p_}, [&](std::int64_t, std::int64_t n, const auto& host) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const float* row = host[0].data() + i * cols_;
        for (std::int64_t c = 0; c < cols_; ++c)
          sum += std::max(1.0 - static_cast<double>(row[c]) * t[static_cast<std::size_t>(c)], 0.0);
      }
      return sum;
    });
    return sum / (static_cast<double>(rows_) * static_cast<double>(cols_));
  }

  core::DeviceBuffer p_, t_;
};

template <typename Run>
std::unique_ptr<bench::ProblemRun> make_run(std::int64_t rows, std::int64_t cols,
                                            cudaStream_t stream) {
  return std::make_unique<Run>(rows, cols, stream);
}

struct LossSpec {
  int id;
  const char* slug;
  const char* description;
  const char* cols_name;    // the second dimension's name ("cols", or "classes" for 95)
  std::int64_t rows, cols;  // KernelBench's
  // Input bytes per element of the rows x cols matrix, per row and per column (95's targets are
  // one int64 per row, 100's one float per column).
  double bytes_per_element, bytes_per_row, bytes_per_col;
  double flops_per_element;  // nominal (memory binds all of these)
  std::unique_ptr<bench::ProblemRun> (*make)(std::int64_t rows, std::int64_t cols,
                                             cudaStream_t stream);
};

const std::vector<LossSpec>& loss_specs() {
  static const std::vector<LossSpec> specs = {
      {95, "cross-entropy-loss",
       "cross_entropy(predictions, targets): mean of logsumexp(row) - row[target]; 32768x4096 "
       "logits, int64 targets",
       "classes", 32768, 4096, 4, 8, 0, 4, make_run<CrossEntropyRun>},
      {96, "huber-loss", "smooth_l1_loss(predictions, targets), beta 1, mean; both 32768x32768",
       "cols", 32768, 32768, 8, 0, 0, 4, make_run<HuberRun>},
      {98, "kl-div-loss",
       "kl_div(log(predictions), targets, reduction='batchmean'); softmax rows, both 16384x16384",
       "cols", 16384, 16384, 8, 0, 0, 4, make_run<KlDivRun>},
      {99, "triplet-margin-loss",
       "TripletMarginLoss(margin 1, p 2, eps 1e-6), mean; anchor, positive, negative of "
       "32768x8192",
       "cols", 32768, 8192, 12, 0, 0, 6, make_run<TripletRun>},
      {100, "hinge-loss",
       "mean(clamp(1 - predictions * targets, min 0)); predictions 32768x32768, targets (32768,) "
       "of +-1 broadcast along each row",
       "cols", 32768, 32768, 4, 0, 4, 3, make_run<HingeRun>},
  };
  return specs;
}

class LossProblem final : public bench::Problem {
 public:
  explicit LossProblem(const LossSpec& spec) : spec_(spec) {}
  std::string name() const override { return fmt::format("kb1-{}-{}", spec_.id, spec_.slug); }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override { return spec_.description; }
  std::vector<bench::ProblemSize> sizes() const override {
    return {kb1::size_of("small", {{"rows", kb1::small_dim(spec_.rows)},
                                   {spec_.cols_name, kb1::small_dim(spec_.cols)}}),
            kb1::size_of("kb", {{"rows", spec_.rows}, {spec_.cols_name, spec_.cols}})};
  }
  std::vector<std::string> solutions() const override { return {"kiln"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType dtype,
                           int world) const override {
    return *floor_cost(size, dtype, world);
  }
  // Every input read once and the scalar written; a few operations per element. A part of the
  // inputs cannot give the loss: the rows differ in scale and offset, and spikes are rare.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    const double rows = static_cast<double>(size.dim("rows"));
    const double cols = static_cast<double>(size.dim(spec_.cols_name));
    const double n = rows * cols;
    const double bytes = spec_.bytes_per_element * n + spec_.bytes_per_row * rows +
                         spec_.bytes_per_col * cols + sizeof(float);
    return roofline::CostModel{
        {{"reduce",
          {{"loss", spec_.flops_per_element * n, roofline::Precision::kFp32, bytes, 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    return spec_.make(size.dim("rows"), size.dim(spec_.cols_name), context.stream);
  }

 private:
  const LossSpec& spec_;
};

}  // namespace

void add_kb1_losses(bench::ProblemList& list) {
  for (const LossSpec& spec : loss_specs()) list.push_back(std::make_unique<LossProblem>(spec));
}

}  // namespace kiln::problems
