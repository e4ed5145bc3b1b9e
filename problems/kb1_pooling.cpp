// The pooling kb1 problems, after KernelBench level 1: max pooling 1-d, 2-d, 3-d (41-43) and
// average pooling 1-d, 2-d, 3-d (44-46), PyTorch's nn.MaxPool*d / nn.AvgPool*d (stride None =
// the kernel size, ceil_mode False, count_include_pad True). One spec per problem (data); one
// problem class. Reference: one thread per output, the window in order, averages summed in
// double; solution "kiln": see kb1_pooling_kernels.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_pooling_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

using kb1::PoolOp;

struct PoolSpec {
  int id;
  const char* slug;
  const char* description;
  PoolOp op;
  int dims;                      // spatial dimensions
  std::int64_t batch, channels;  // KernelBench's sizes
  std::int64_t s0, s1, s2;       // (length), (height, width) or (depth, height, width); 0 unused
  int kernel, stride, padding, dilation;
};

const std::vector<PoolSpec>& pool_specs() {
  static const std::vector<PoolSpec> specs = {
      {41, "maxpool-1d", "nn.MaxPool1d(8, stride 1, padding 4, dilation 3), x of 64x192x65536",
       PoolOp::kMax, 1, 64, 192, 65536, 0, 0, 8, 1, 4, 3},
      {42, "maxpool-2d", "nn.MaxPool2d(4, stride 1, padding 1), x of 32x64x512x512", PoolOp::kMax,
       2, 32, 64, 512, 512, 0, 4, 1, 1, 1},
      {43, "maxpool-3d", "nn.MaxPool3d(3, stride 2, padding 1, dilation 3), x of 16x32x128^3",
       PoolOp::kMax, 3, 16, 32, 128, 128, 128, 3, 2, 1, 3},
      {44, "avgpool-1d", "nn.AvgPool1d(8, stride 1, padding 4), x of 64x128x65536", PoolOp::kAvg, 1,
       64, 128, 65536, 0, 0, 8, 1, 4, 1},
      {45, "avgpool-2d", "nn.AvgPool2d(11) (stride 11, no padding), x of 16x64x2048x2048",
       PoolOp::kAvg, 2, 16, 64, 2048, 2048, 0, 11, 11, 0, 1},
      {46, "avgpool-3d", "nn.AvgPool3d(3, stride 2, padding 1), x of 16x32x128x128x256",
       PoolOp::kAvg, 3, 16, 32, 128, 128, 256, 3, 2, 1, 1},
  };
  return specs;
}

// The names of the spatial dimensions, outermost first.
const char* spatial_name(int dims, int i) {
  static const char* const names[3][3] = {
      {"length"}, {"height", "width"}, {"depth", "height", "width"}};
  return names[dims - 1][i];
}

// scripts/kb1_torch_eager.py's `small`: dimensions >= 1024 divided by 16, from 256 to 1023
bench::ProblemSize preset(const PoolSpec& spec, const std::string& name, bool small) {
  const auto d = [&](std::int64_t v) { return small ? kb1::small_dim(v) : v; };
  const std::int64_t b = d(spec.batch), c = d(spec.channels);
  const std::int64_t s[3] = {spec.s0, spec.s1, spec.s2};
  switch (spec.dims) {
    case 1:
      return kb1::size_of(name, {{"batch", b}, {"channels", c}, {"length", d(s[0])}});
    case 2:
      return kb1::size_of(name,
                          {{"batch", b}, {"channels", c}, {"height", d(s[0])}, {"width", d(s[1])}});
    default:
      return kb1::size_of(name, {{"batch", b},
                                 {"channels", c},
                                 {"depth", d(s[0])},
                                 {"height", d(s[1])},
                                 {"width", d(s[2])}});
  }
}

// The (batch * channels, D, H, W) pooling of a size; 1-d and 2-d leave the leading axes whole.
kb1::PoolShape shape_of(const PoolSpec& spec, const bench::ProblemSize& size) {
  kb1::PoolShape shape;
  shape.op = spec.op;
  shape.planes = size.dim("batch") * size.dim("channels");
  for (int i = 0; i < spec.dims; ++i) {
    shape.axis[3 - spec.dims + i] =
        kb1::pool_axis(size.dim(spatial_name(spec.dims, i)), spec.kernel, spec.stride, spec.padding,
                       spec.dilation);
  }
  return shape;
}

// One output on the host in double, as PyTorch's kernels bound their windows: max pooling
// starts at the first in-range position of the dilated window and stops at the input's end;
// average pooling clips [start, start + kernel) to the padded extent for the divisor
// (count_include_pad) and then to the input for the sum.
double pool_host(const kb1::PoolShape& s, const std::vector<float>& plane, std::int64_t o) {
  const kb1::PoolAxis &ad = s.axis[0], &ah = s.axis[1], &aw = s.axis[2];
  const std::int64_t ow = o % aw.out, oh = o / aw.out % ah.out, od = o / aw.out / ah.out;
  const auto at = [&](std::int64_t d, std::int64_t h, std::int64_t w) {
    return static_cast<double>(plane[static_cast<std::size_t>((d * ah.in + h) * aw.in + w)]);
  };
  if (s.op == PoolOp::kMax) {
    struct Range {
      std::int64_t lo, hi, step;
    };
    const auto range = [](const kb1::PoolAxis& a, std::int64_t out) {
      const std::int64_t start = out * a.stride - a.padding;
      std::int64_t lo = start;
      while (lo < 0) lo += a.dilation;
      return Range{lo, std::min(start + std::int64_t{a.dilation} * (a.kernel - 1) + 1, a.in),
                   a.dilation};
    };
    const Range rd = range(ad, od), rh = range(ah, oh), rw = range(aw, ow);
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t d = rd.lo; d < rd.hi; d += rd.step)
      for (std::int64_t h = rh.lo; h < rh.hi; h += rh.step)
        for (std::int64_t w = rw.lo; w < rw.hi; w += rw.step) best = std::max(best, at(d, h, w));
    return best;
  }
  std::int64_t lo[3], hi[3], divisor = 1;
  const std::int64_t out[3] = {od, oh, ow};
  for (int i = 0; i < 3; ++i) {
    const kb1::PoolAxis& a = s.axis[i];
    const std::int64_t start = out[i] * a.stride - a.padding;
    const std::int64_t end = std::min(start + a.kernel, a.in + a.padding);
    divisor *= end - start;
    lo[i] = std::max<std::int64_t>(start, 0);
    hi[i] = std::min(end, a.in);
  }
  double sum = 0.0;
  for (std::int64_t d = lo[0]; d < hi[0]; ++d)
    for (std::int64_t h = lo[1]; h < hi[1]; ++h)
      for (std::int64_t w = lo[2]; w < hi[2]; ++w) sum += at(d, h, w);
  return sum / static_cast<double>(divisor);
}

class PoolRun final : public bench::ProblemRun {
 public:
  PoolRun(const kb1::PoolShape& shape, cudaStream_t stream)
      : shape_(shape),
        stream_(stream),
        x_(sizeof(float) * static_cast<std::size_t>(shape.inputs())),
        reference_(out_bytes()),
        solution_(out_bytes()) {}
  void make_inputs(std::uint64_t seed) override {
    // Rows of the last dimension, each with its own offset and scale.
    const std::int64_t cols = shape_.axis[2].in;
    kb1::fill_row_varied(x_.as<float>(), shape_.inputs() / cols, cols, seed, false, stream_);
  }
  void poison_outputs() override {
    core::poison(reference_.data(), out_bytes(), stream_);
    core::poison(solution_.data(), out_bytes(), stream_);
  }
  void reference() override {
    kb1::launch_pool_reference(shape_, x_.as<float>(), reference_.as<float>(), stream_);
  }
  void solution(int) override {
    kb1::launch_pool_kiln(shape_, x_.as<float>(), solution_.as<float>(), stream_);
  }
  std::string check_reference() override {
    // The first, middle and last 4096 outputs (the first and last take in the padded borders),
    // each from a host copy of its input plane.
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const kb1::Sample y = kb1::sample_floats(reference_.as<float>(), shape_.outputs(), 4096);
    const std::int64_t in_plane = shape_.in_plane(), out_plane = shape_.out_plane();
    std::map<std::int64_t, std::vector<float>> planes;
    for (std::size_t i = 0; i < y.value.size(); ++i) {
      const std::int64_t p = y.index[i] / out_plane;
      auto it = planes.find(p);
      if (it == planes.end()) {
        it = planes.emplace(p, kb1::copy_floats(x_.as<float>(), p * in_plane, in_plane)).first;
      }
      const double want = pool_host(shape_, it->second, y.index[i] % out_plane);
      if (!(std::fabs(y.value[i] - want) <= kb1::kTolerance * (1.0 + std::fabs(want)))) {
        return fmt::format("output {}: {:.9g} on the host, the reference wrote {:.9g}", y.index[i],
                           want, y.value[i]);
      }
    }
    return "";
  }
  std::string compare() override {
    return kb1::describe(
        kb1::compare_floats(solution_.as<float>(), reference_.as<float>(), shape_.outputs(),
                            kb1::kTolerance, kb1::kTolerance, stream_),
        shape_.outputs(), kb1::kTolerance);
  }
  // x: (batch, channels, [[depth,] height,] length or width) fp32, contiguous; y: the same with
  // each spatial size replaced by its output size (kb1::pool_axis).
  bench::CandidateBuffers candidate_buffers() override {
    return bench::one_rank_buffers({{x_.data(), x_.bytes()}}, solution_.data(), out_bytes());
  }
  std::vector<OutputSpan> reference_outputs() override {
    return {{reference_.data(), reference_.bytes()}};
  }

 private:
  std::uint64_t out_bytes() const {
    return static_cast<std::uint64_t>(shape_.outputs()) * sizeof(float);
  }
  kb1::PoolShape shape_;
  cudaStream_t stream_;
  core::DeviceBuffer x_, reference_, solution_;
};

class PoolProblem final : public bench::Problem {
 public:
  explicit PoolProblem(const PoolSpec& spec) : spec_(spec) {}
  std::string name() const override { return fmt::format("kb1-{}-{}", spec_.id, spec_.slug); }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override { return spec_.description; }
  std::vector<bench::ProblemSize> sizes() const override {
    return {preset(spec_, "small", true), preset(spec_, "kb", false)};
  }
  std::vector<std::string> solutions() const override { return {"kiln"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType dtype,
                           int world) const override {
    return *floor_cost(size, dtype, world);
  }
  // The input read once, the output written once, one operation per window element.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    const kb1::PoolShape shape = shape_of(spec_, size);
    const double in = static_cast<double>(shape.inputs());
    const double out = static_cast<double>(shape.outputs());
    const double window = std::pow(static_cast<double>(spec_.kernel), spec_.dims);
    return roofline::CostModel{
        {{"pool", {{"pool", out * window, roofline::Precision::kFp32, 4.0 * (in + out), 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    const kb1::PoolShape shape = shape_of(spec_, size);
    if (shape.outputs() <= 0 || shape.axis[0].out <= 0 || shape.axis[1].out <= 0 ||
        shape.axis[2].out <= 0) {
      throw UsageError(fmt::format("{}: the window does not fit size {}", name(), size.name));
    }
    return std::make_unique<PoolRun>(shape, context.stream);
  }

 private:
  const PoolSpec& spec_;
};

}  // namespace

void add_kb1_pooling(bench::ProblemList& list) {
  for (const PoolSpec& spec : pool_specs()) list.push_back(std::make_unique<PoolProblem>(spec));
}

}  // namespace kiln::problems
