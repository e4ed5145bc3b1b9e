// The cumulative kb1 problems, after KernelBench level 1: cumsum (89), cumprod (90), the reverse
// cumsum (91), the exclusive cumsum (92) and the masked cumsum (93), each along dim 1 of a
// 32768x32768 tensor. Reference: one thread per row in order, sums in double (cumprod: fp32
// products in order, see kb1_cumulative_kernels.cu); solution "kiln": see
// kb1_cumulative_kernels.hpp.
//
// Inputs are positive (fill_row_varied's `positive`), as KernelBench's torch.rand values are.
// With signed inputs the running sums of a row whose offset is near 0 wander through 0 with a
// magnitude of hundreds, where atol 1e-4 is below what fp32 arithmetic can hold: a plain
// fp32 scan (PyTorch's order, or one sequential pass) then misses the double reference by up
// to 5-13x the tolerance on thousands of elements per trial. With positive inputs the sums
// only grow and the relative tolerance governs: a sequential fp32 pass stays within 0.12 of
// the tolerance, kiln's blocked order within 0.012 (host emulations over a kb-size trial).
// Sums get exact {0, 1} inputs on some trials (then compared bit for bit).
#include <fmt/format.h>

#include <cfloat>
#include <cmath>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_cub.hpp"
#include "problems/kb1_cumulative_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

using kb1::ScanOp;

struct ScanSpec {
  int id;
  const char* slug;
  const char* description;
  ScanOp op;
  double flops_per_element;  // nominal (memory binds all of these)
};

const std::vector<ScanSpec>& scan_specs() {
  static const std::vector<ScanSpec> specs = {
      {89, "cumsum", "torch.cumsum(x, dim=1), x of 32768x32768", ScanOp::kCumsum, 1},
      {90, "cumprod", "torch.cumprod(x, dim=1), positive x", ScanOp::kCumprod, 1},
      {91, "cumsum-reverse", "cumsum(x.flip(1), 1).flip(1): suffix sums", ScanOp::kCumsumReverse,
       1},
      {92, "cumsum-exclusive", "cat(zeros(rows, 1), cumsum(x[:, :-1], 1), 1): the shape of x",
       ScanOp::kCumsumExclusive, 1},
      {93, "masked-cumsum", "torch.cumsum(x * mask, dim=1), mask bool (one byte, 0 or 1)",
       ScanOp::kMaskedCumsum, 2},
  };
  return specs;
}

// The scan of one row on the host, in double (the reference's own check).
std::vector<double> host_scan(ScanOp op, const std::vector<float>& x,
                              const std::vector<std::uint8_t>& mask) {
  const std::size_t n = x.size();
  std::vector<double> y(n);
  double running = op == ScanOp::kCumprod ? 1.0 : 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t j = op == ScanOp::kCumsumReverse ? n - 1 - k : k;
    double v = x[j];
    if (op == ScanOp::kMaskedCumsum && mask[j] == 0) v = 0.0;
    if (op == ScanOp::kCumsumExclusive) {
      y[j] = running;
      running += v;
    } else {
      running = op == ScanOp::kCumprod ? running * v : running + v;
      y[j] = running;
    }
  }
  return y;
}

// Below this a double product and fp32 products in order may differ by more than 1e-4
// relative: the fp32 running product is subnormal (below 2^-126), carries few significant bits
// and rounds to 0 where the double does not. Its absolute error stays many orders below this.
constexpr double kSubnormalSlack = 1e-30;

bool host_agrees(ScanOp op, double got, double want) {
  if (op != ScanOp::kCumprod)
    return std::fabs(got - want) <= kb1::kTolerance * (1.0 + std::fabs(want));
  // cumprod: relative; inf only where the double product is at fp32's largest value or beyond.
  if (std::isinf(got))
    return (got > 0) == (want > 0) && std::fabs(want) >= (1.0 - kb1::kTolerance) * FLT_MAX;
  return std::fabs(got - want) <= kb1::kTolerance * std::fabs(want) + kSubnormalSlack;
}

class ScanRun final : public bench::ProblemRun {
 public:
  ScanRun(const ScanSpec& spec, std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : spec_(spec),
        rows_(rows),
        cols_(cols),
        count_(rows * cols),
        stream_(stream),
        x_(bytes()),
        mask_(masked() ? static_cast<std::size_t>(count_) : 0),
        reference_(bytes()),
        solution_(bytes()),
        cub_temp_(kb1::cub_scan_temp_bytes(spec.op, rows, cols)) {}
  void make_inputs(std::uint64_t seed) override {
    exact_ = kb1::scan_sums(spec_.op) && kb1::exact_trial(seed);
    if (exact_) {
      // Every prefix sum of {0, 1} values is an integer below 2^24: exact in any order.
      kb1::fill_binary(x_.as<float>(), count_, seed, stream_);
    } else {
      kb1::fill_row_varied(x_.as<float>(), rows_, cols_, seed, true, stream_);
    }
    if (masked()) kb1::fill_mask(mask_.as<std::uint8_t>(), count_, core::mix64(seed + 1), stream_);
  }
  void poison_outputs() override {
    core::poison(reference_.data(), bytes(), stream_);
    core::poison(solution_.data(), bytes(), stream_);
  }
  void reference() override {
    kb1::launch_scan_reference(spec_.op, x_.as<float>(), mask_.as<std::uint8_t>(),
                               reference_.as<float>(), rows_, cols_, stream_);
  }
  void solution(int index) override {
    if (index == 1) {  // "cub"
      kb1::launch_cub_scan(spec_.op, x_.as<float>(), mask_.as<std::uint8_t>(),
                           solution_.as<float>(), rows_, cols_, cub_temp_.data(), cub_temp_.bytes(),
                           stream_);
      return;
    }
    kb1::launch_scan_kiln(spec_.op, x_.as<float>(), mask_.as<std::uint8_t>(), solution_.as<float>(),
                          rows_, cols_, stream_);
  }
  std::string check_reference() override {
    // The first, a middle and the last row, every element, on the host in double.
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (const std::int64_t row : {std::int64_t{0}, rows_ / 2, rows_ - 1}) {
      const std::int64_t start = row * cols_;
      const std::vector<float> x = kb1::copy_floats(x_.as<float>(), start, cols_);
      const std::vector<float> y = kb1::copy_floats(reference_.as<float>(), start, cols_);
      std::vector<std::uint8_t> mask;
      if (masked()) {
        mask.resize(static_cast<std::size_t>(cols_));
        KILN_CUDA_CHECK(cudaMemcpy(mask.data(), mask_.as<std::uint8_t>() + start, mask.size(),
                                   cudaMemcpyDeviceToHost));
      }
      const std::vector<double> want = host_scan(spec_.op, x, mask);
      for (std::size_t j = 0; j < want.size(); ++j) {
        if (!host_agrees(spec_.op, y[j], want[j])) {
          return fmt::format("row {} column {}: {:.9g} on the host, the reference wrote {:.9g}",
                             row, j, want[j], y[j]);
        }
      }
    }
    return "";
  }
  std::string compare() override {
    // Exact trials: sums of {0, 1} are exact in any order, so the bits must agree.
    const double tolerance = exact_ ? 0.0 : kb1::kTolerance;
    const std::string diff =
        kb1::describe(kb1::compare_floats(solution_.as<float>(), reference_.as<float>(), count_,
                                          tolerance, tolerance, stream_),
                      count_, tolerance);
    return diff.empty() || !exact_ ? diff : diff + " on exact {0, 1} inputs";
  }
  // A candidate gets x (fp32, rows x cols, row-major) and, for the masked cumsum (93), the mask
  // (rows x cols bytes, each 0 or 1: torch.bool's layout) as inputs[1]; it writes y (fp32, the
  // shape of x) to outputs[0].
  bench::CandidateBuffers candidate_buffers() override {
    if (masked()) {
      return bench::one_rank_buffers({{x_.data(), x_.bytes()}, {mask_.data(), mask_.bytes()}},
                                     solution_.data(), bytes());
    }
    return bench::one_rank_buffers({{x_.data(), x_.bytes()}}, solution_.data(), bytes());
  }

 private:
  bool masked() const { return spec_.op == ScanOp::kMaskedCumsum; }
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(count_) * sizeof(float); }
  const ScanSpec& spec_;
  std::int64_t rows_, cols_, count_;
  cudaStream_t stream_;
  core::DeviceBuffer x_, mask_, reference_, solution_, cub_temp_;
  bool exact_ = false;
};

class ScanProblem final : public bench::Problem {
 public:
  explicit ScanProblem(const ScanSpec& spec) : spec_(spec) {}
  std::string name() const override { return fmt::format("kb1-{}-{}", spec_.id, spec_.slug); }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override { return spec_.description; }
  std::vector<bench::ProblemSize> sizes() const override {
    return {kb1::size_of("small", {{"rows", 2048}, {"cols", 2048}}),
            kb1::size_of("kb", {{"rows", 32768}, {"cols", 32768}})};
  }
  // "cub": the library's by-key device scans (kb1_cub.hpp).
  std::vector<std::string> solutions() const override { return {"kiln", "cub"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  // x (and the mask) read once, y written once.
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int) const override {
    const double n = elements(size);
    const double bytes = 8.0 * n + (masked() ? n : 0.0);
    return {
        {{"scan", {{"scan", n * spec_.flops_per_element, roofline::Precision::kFp32, bytes, 0}}}}};
  }
  // Every output element written once and every input element the outputs depend on read
  // once, one operation per element: all of x, except its last column for the exclusive scan
  // (92, which never uses it); for the masked scan (93) the mask, and x where the mask is 1,
  // counted in 32-byte sectors: a sector of x whose 8 mask bytes are all 0 (1 in 256 with
  // random bits) need not be read.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    const double n = elements(size);
    double x_bytes = 4.0 * n;
    if (spec_.op == ScanOp::kCumsumExclusive)
      x_bytes = 4.0 * static_cast<double>(size.dim("rows")) * (size.dim("cols") - 1);
    if (masked()) x_bytes = 4.0 * n * (255.0 / 256.0) + n;
    return roofline::CostModel{
        {{"scan", {{"scan", n, roofline::Precision::kFp32, x_bytes + 4.0 * n, 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    return std::make_unique<ScanRun>(spec_, size.dim("rows"), size.dim("cols"), context.stream);
  }

 private:
  bool masked() const { return spec_.op == ScanOp::kMaskedCumsum; }
  static double elements(const bench::ProblemSize& size) {
    return static_cast<double>(size.dim("rows")) * size.dim("cols");
  }
  const ScanSpec& spec_;
};

}  // namespace

void add_kb1_cumulative(bench::ProblemList& list) {
  for (const ScanSpec& spec : scan_specs()) list.push_back(std::make_unique<ScanProblem>(spec));
}

}  // namespace kiln::problems
