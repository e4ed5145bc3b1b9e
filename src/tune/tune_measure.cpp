// The tuner's GPU measurements (see tune_measure.hpp).
#include "tune/tune_measure.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <thread>

#include "comm/broadcast_text.hpp"
#include "comm/collective.hpp"
#include "comm/rank_timing.hpp"
#include "comm/sm_probe.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/hardware_profile.hpp"
#include "core/stream.hpp"
#include "overlap/copy_engine_exchange.hpp"
#include "overlap/gemm_collective.hpp"
#include "overlap/launch_geometry.hpp"
#include "tune/gemm_config_search.hpp"
#include "tune/two_phase_curve.hpp"

namespace kiln::tune {
namespace {

using overlap::GemmShape;
using overlap::OverlapOp;
using overlap::Plan;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// SMs the GEMM of `plan` leaves NCCL (0: no limit, NCCL's default communicator).
}  // namespace

std::vector<Plan> default_base_plans() {
  std::vector<Plan> plans;
  for (const int cap : {0, 128}) {
    for (const int swizzle : {1, 8}) {
      Plan p;
      p.copy_engine = true;
      p.schedule.cta_cap = cap;
      p.schedule.swizzle = swizzle;
      plans.push_back(p);
    }
  }
  Plan nccl;
  nccl.schedule.cta_cap = 124;
  nccl.schedule.swizzle = 8;
  plans.push_back(nccl);
  // comm=ce2 with every SM or a cap of 128, swizzle 8: the fastest ce2 plans of the 4xH100 sweep
  // (2026-11-28) on five of six shapes. An AllReduce on a power-of-two world only: a profile
  // drops them where they cannot run (tune profile's base plans are filtered per shape).
  for (const int cap : {0, 128}) {
    Plan p;
    p.copy_engine = true;
    p.two_phase = true;
    p.schedule.cta_cap = cap;
    p.schedule.swizzle = 8;
    plans.push_back(p);
  }
  return plans;
}

std::vector<double> curve_sizes(double min_bytes, double max_bytes, int points_per_octave,
                                double granule) {
  if (!(min_bytes > 0) || !(max_bytes >= min_bytes) || points_per_octave < 1 || !(granule > 0)) {
    throw UsageError(fmt::format(
        "curve sizes: need 0 < min ({}) <= max ({}), points per octave ({}) >= 1, granule > 0",
        min_bytes, max_bytes, points_per_octave));
  }
  std::vector<double> sizes;
  const double octaves = std::log2(max_bytes / min_bytes);
  const int steps = static_cast<int>(std::ceil(octaves * points_per_octave - 1e-9));
  for (int i = 0; i <= steps; ++i) {
    const double raw =
        std::min(min_bytes * std::exp2(static_cast<double>(i) / points_per_octave), max_bytes);
    const double rounded = std::max(granule, std::round(raw / granule) * granule);
    if (sizes.empty() || rounded > sizes.back()) sizes.push_back(rounded);
  }
  return sizes;
}

double profile_units(const TuneProfileOptions& o, int curve_count, int curve_points) {
  return static_cast<double>(curve_count) * curve_points +
         20.0 * static_cast<double>(o.shapes.size() * o.base_plans.size()) +
         (o.probe_nccl_sms ? 5.0 * curve_count : 0.0) +
         (o.search_gemm ? 10.0 * static_cast<double>(o.shapes.size()) : 0.0);
}

namespace {

// The base plans of each shape: with the GEMM configuration rank 0 found fastest for it.
std::vector<std::vector<Plan>> shape_base_plans(comm::Communicator& comm,
                                                const TuneProfileOptions& o,
                                                tune::TunerProfile& profile,
                                                const TuneProgress& progress) {
  std::vector<std::vector<Plan>> per_shape;
  const int sms = overlap::current_device_sms();
  // The base plans that can run this shape at this world size (comm=ce2 needs an AllReduce on a
  // power-of-two world, for one); at least one must.
  const auto runnable = [&](const GemmShape& shape, std::vector<Plan> plans) {
    std::erase_if(plans, [&](const Plan& p) {
      // comm=ce2 runs at 2 ranks but cannot win there (tune_plan skips it; do not measure it).
      if (p.two_phase && comm.size() < 3) return true;
      return !overlap::GemmCollective::can_implement(o.op, shape, o.dtype, p, comm.size(), sms)
                  .empty();
    });
    if (plans.empty()) {
      throw UsageError(fmt::format("tune profile: no base plan can run {} at {} ranks",
                                   overlap::shape_name(shape), comm.size()));
    }
    return plans;
  };
  for (const GemmShape& shape : o.shapes) {
    if (!o.search_gemm) {
      per_shape.push_back(runnable(shape, o.base_plans));
      continue;
    }
    std::string chosen;
    if (comm.rank() == 0) {
      const std::size_t element = core::dtype_size(o.dtype);
      core::Stream stream;
      core::DeviceBuffer a(static_cast<std::size_t>(shape.m) * shape.k * element),
          b(static_cast<std::size_t>(shape.n) * shape.k * element);
      core::fill_uniform(a.data(), o.dtype, static_cast<std::size_t>(shape.m) * shape.k, 21,
                         stream);
      core::fill_uniform(b.data(), o.dtype, static_cast<std::size_t>(shape.n) * shape.k, 22,
                         stream);
      // The profile keeps the configuration only (the plans' caps come from the base plans):
      // no balanced-cap variants, whose timing would be of a cap the plans do not run.
      GemmSearchOptions search;
      search.balanced_cap = 0;
      const std::vector<GemmCandidate> ranked =
          search_gemm_configs(shape, o.dtype, o.layout, a.data(), b.data(), search, stream);
      Plan best;
      best.gemm = ranked.front().config;
      best.schedule = ranked.front().schedule;
      chosen = overlap::to_string(best);
      profile.provenance["gemm_search"].push_back({{"shape", overlap::shape_name(shape)},
                                                   {"chosen", candidate_name(ranked.front())},
                                                   {"us", ranked.front().us.median},
                                                   {"us_stage", ranked.front().stage},
                                                   {"candidates", ranked.size()}});
    }
    chosen = comm::broadcast_text(comm, chosen, "GEMM configuration");
    const overlap::GemmConfig config = overlap::parse_plan(chosen, "rank 0's GEMM search").gemm;
    std::vector<Plan> bases;
    for (Plan plan : o.base_plans) {
      if (plan.schedule.cta_cap % config.cluster.size() == 0) plan.gemm = config;
      const bool seen = std::any_of(bases.begin(), bases.end(), [&](const Plan& p) {
        return overlap::to_string(p) == overlap::to_string(plan);
      });
      if (!seen) bases.push_back(plan);
    }
    per_shape.push_back(runnable(shape, std::move(bases)));
    if (progress) {
      progress(10.0, fmt::format("GEMM search {}: {}", overlap::shape_name(shape),
                                 overlap::gemm_config_name(config)));
    }
  }
  return per_shape;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// OverlapTimer

struct OverlapTimer::Buffers {
  core::DeviceBuffer a, b, out;
  core::Stream stream;
};

OverlapTimer::OverlapTimer(comm::Communicator& comm, OverlapOp op, core::DType dtype,
                           overlap::WeightLayout layout, const GemmShape& shape)
    : comm_(comm), op_(op), dtype_(dtype), layout_(layout), shape_(shape), limited_(comm) {
  const std::size_t element = core::dtype_size(dtype);
  const std::size_t a_count = static_cast<std::size_t>(shape.m) * shape.k;
  const std::size_t b_count = static_cast<std::size_t>(shape.n) * shape.k;
  buffers_ = std::make_unique<Buffers>(Buffers{
      core::DeviceBuffer(a_count * element), core::DeviceBuffer(b_count * element),
      core::DeviceBuffer(static_cast<std::size_t>(shape.m) * shape.n * element), core::Stream()});
  const std::uint64_t seed = 0x74756e65ull + 31 * comm.rank();  // "tune"
  core::fill_uniform(buffers_->a.data(), dtype, a_count, seed + 1, buffers_->stream);
  core::fill_uniform(buffers_->b.data(), dtype, b_count, seed + 2, buffers_->stream);
  comm.wait(buffers_->stream, "tuner inputs");
}

OverlapTimer::~OverlapTimer() = default;

std::unique_ptr<overlap::GemmCollective> OverlapTimer::make(const Plan& plan, bool trace) {
  overlap::OverlapOptions options;
  options.trace = trace;
  const int sms = overlap::current_device_sms();
  const overlap::LaunchGeometry launch =
      overlap::host_launch_geometry(shape_, plan.gemm, plan.schedule, sms);
  options.collective_comm = limited_.get(overlap::collective_ctas_for(plan, launch, sms));
  return std::make_unique<overlap::GemmCollective>(op_, shape_, dtype_, layout_, comm_, plan,
                                                   options);
}

void OverlapTimer::enqueue(overlap::GemmCollective& op, Part part) {
  const bool nk = layout_ == overlap::WeightLayout::kNK;
  const overlap::MatrixRef a{buffers_->a.data(), dtype_, shape_.m, shape_.k};
  const overlap::MatrixRef b{buffers_->b.data(), dtype_, nk ? shape_.n : shape_.k,
                             nk ? shape_.k : shape_.n};
  switch (part) {
    case Part::kFull:
      op.run(a, b, {buffers_->out.data(), dtype_, op.output_rows(), shape_.n}, buffers_->stream);
      break;
    case Part::kWithoutReorder:
      op.run_without_reorder(a, b, buffers_->stream);
      break;
    case Part::kGemmOnly:
      op.run_gemm_only(a, b, buffers_->stream);
      break;
  }
}

std::vector<core::TimingStats> OverlapTimer::time_variants(
    const std::vector<Variant>& variants, int warmup, int per_round, int rounds,
    const std::function<void(int)>& between_rounds) {
  const int n = static_cast<int>(variants.size());
  if (n == 0 || per_round < 1 || rounds < 1) {
    throw UsageError(fmt::format("time_variants: {} variant(s), {} per round, {} round(s)", n,
                                 per_round, rounds));
  }
  const std::vector<std::vector<float>> pooled = comm::time_rounds_over_ranks(
      comm_, buffers_->stream, n, [&](int v, int) { enqueue(*variants[v].op, variants[v].part); },
      {warmup, per_round, rounds}, fmt::format("tuner: rounds of {} interleaved plans", n),
      between_rounds);
  std::vector<core::TimingStats> stats;
  for (const auto& samples : pooled)
    stats.push_back(core::summarize(std::span<const float>(samples)));
  return stats;
}

core::TimingStats OverlapTimer::time(overlap::GemmCollective& op, Part part, int warmup,
                                     int iterations) {
  return time_variants({{&op, part}}, warmup, iterations, 1)[0];
}

void OverlapTimer::settle(overlap::GemmCollective& op, double seconds) {
  if (seconds <= 0) return;
  // The probe's figure is the max over ranks, so every rank computes the same count.
  const double us = time(op, Part::kFull, 1, 3).median;
  const int runs = static_cast<int>(std::clamp(seconds * 1e6 / std::max(us, 1.0), 1.0, 20000.0));
  time(op, Part::kFull, 0, runs);
}

std::vector<core::TimingStats> OverlapTimer::time_interleaved(const std::vector<Plan>& plans,
                                                              Part part, int warmup, int iterations,
                                                              int rounds) {
  std::vector<std::unique_ptr<overlap::GemmCollective>> ops;
  std::vector<Variant> variants;
  for (const Plan& plan : plans) {
    ops.push_back(make(plan, false));
    variants.push_back({ops.back().get(), part});
  }
  settle(*ops.front(), settle_seconds_);
  return time_variants(variants, warmup, std::max(iterations / rounds, 1), rounds);
}

std::vector<overlap::GroupTimeline> OverlapTimer::traced_timeline(overlap::GemmCollective& op) {
  enqueue(op, Part::kWithoutReorder);
  return op.timeline();
}

// ------------------------------------------------------------------------------------------------
// Profiles

namespace {

// The latency of one group's communication as GemmCollective makes it, per size.
std::vector<double> measure_curve(comm::Communicator& comm, const TuneProfileOptions& o,
                                  const tune::TransportCurve& which,
                                  const std::vector<double>& sizes,
                                  overlap::LimitedCommunicator* limited,
                                  const TuneProgress& progress) {
  const int world = comm.size(), me = comm.rank();
  const std::size_t element = core::dtype_size(o.dtype);
  const double largest = sizes.back();
  core::Stream stream;
  core::DeviceBuffer send(static_cast<std::size_t>(largest)),
      recv(static_cast<std::size_t>(largest / world) + 256);
  core::fill_uniform(send.data(), o.dtype, static_cast<std::uint64_t>(largest) / element, 7 + me,
                     stream);
  std::unique_ptr<overlap::CopyEngineExchange> exchange;
  std::unique_ptr<TwoPhaseGroupAlone> two_phase;
  if (which.transport == "ce2") {
    two_phase = std::make_unique<TwoPhaseGroupAlone>(comm, static_cast<std::size_t>(largest),
                                                     o.dtype, overlap::current_device_sms());
  } else if (which.transport == "ce") {
    // A region holds what one rank sends another: its subtiles (RS) or the whole group (AR).
    const std::size_t region =
        static_cast<std::size_t>(o.op == OverlapOp::kReduceScatter ? largest / world : largest);
    exchange = std::make_unique<overlap::CopyEngineExchange>(comm, region);
  }
  const ncclComm_t nccl = limited != nullptr ? limited->get() : comm.get();
  std::vector<double> us;
  for (const double bytes : sizes) {
    const std::size_t count = static_cast<std::size_t>(bytes) / element;
    const auto body = [&](int) {
      if (two_phase) {
        two_phase->enqueue(send.data(), static_cast<std::size_t>(bytes), stream);
      } else if (exchange) {
        for (int step = 1; step < world; ++step) {
          const int r = (me + step) % world;
          if (o.op == OverlapOp::kReduceScatter) {
            const std::size_t part = static_cast<std::size_t>(bytes) / world;
            exchange->copy_to(r, 0, static_cast<char*>(send.data()) + r * part, part, stream);
          } else {
            exchange->copy_to(r, 0, send.data(), static_cast<std::size_t>(bytes), stream);
          }
        }
      } else if (o.op == OverlapOp::kAllReduce) {
        comm.call("tuner allreduce", [&] {
          return ncclAllReduce(send.data(), send.data(), count, comm::nccl_type(o.dtype), ncclSum,
                               nccl, stream);
        });
      } else {
        comm.call("tuner reducescatter", [&] {
          return ncclReduceScatter(send.data(), recv.data(), count / world,
                                   comm::nccl_type(o.dtype), ncclSum, nccl, stream);
        });
      }
    };
    const std::vector<float> samples =
        samples_over_ranks(comm, stream, o.warmup, o.iterations, body,
                           fmt::format("tuner curve {} {} B", which.transport, bytes));
    // One rank sends nothing by copy engine: an empty timed region, floored so the curve stays
    // valid (its samples must be positive).
    us.push_back(std::max(core::summarize(std::span<const float>(samples)).median, 0.01));
    if (progress) progress(1.0, fmt::format("{} curve, {:.0f} KiB", which.transport, bytes / 1024));
  }
  return us;
}

// SMs a running NCCL kernel holds: start a long AllReduce, then let the probe find the SMs.
tune::NcclSmMeasurement probe_nccl(comm::Communicator& comm, ncclComm_t nccl, int limit,
                                   core::DType dtype) {
  const std::size_t bytes = 512ull << 20;  // ~1.5 ms on NVLink: outlasts the probe's start
  core::DeviceBuffer data(bytes);
  core::Stream nccl_stream, probe_stream;
  core::fill_uniform(data.data(), dtype, bytes / core::dtype_size(dtype), 99, nccl_stream);
  comm.wait(nccl_stream, "nccl sm probe inputs");
  // Three calls back to back keep the stream busy for milliseconds even with few CTAs, and the
  // millisecond's sleep lets the first kernel become resident (a fresh communicator connects
  // lazily on its first call).
  for (int i = 0; i < 3; ++i) {
    comm.call("sm probe allreduce", [&] {
      return ncclAllReduce(data.data(), data.data(), bytes / core::dtype_size(dtype),
                           comm::nccl_type(dtype), ncclSum, nccl, nccl_stream);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const comm::SmProbeSamples samples = comm::run_sm_probe(probe_stream, 200'000);
  comm.wait(nccl_stream, "nccl sm probe");
  const comm::SmProbeResult r = comm::count_probe(samples, overlap::current_device_sms(), 20'000);
  tune::NcclSmMeasurement m;
  m.ctas_limit = limit;
  m.sms_held = r.held_elsewhere;
  m.overlapped = r.overlapped;
  return m;
}

}  // namespace

GemmProfileRun::GemmProfileRun(OverlapTimer& timer, const tune::TunerProfile& profile,
                               const Plan& base)
    : timer_(timer), profile_(profile), plan_(base) {
  plan_.partition.clear();  // one group per wave: the most communication beside the GEMM
  op_ = timer.make(plan_, false);
  traced_ = timer.make(plan_, true);
  if (const std::vector<int> coarse = tune::coarse_partition(op_->launch().waves());
      !coarse.empty()) {
    Plan coarse_plan = plan_;
    coarse_plan.partition = coarse;
    coarse_ = timer.make(coarse_plan, false);
  }
  // The curve this plan's groups travel on, for the slowdown beside the GEMM.
  if (const tune::TransportCurve* t = profile.curve_for(plan_, op_->launch())) {
    curve_ = t->curve();
  }
}

GemmProfileRun::~GemmProfileRun() = default;

std::vector<OverlapTimer::Variant> GemmProfileRun::variants() {
  std::vector<OverlapTimer::Variant> out{{op_.get(), OverlapTimer::Part::kGemmOnly},
                                         {op_.get(), OverlapTimer::Part::kWithoutReorder},
                                         {op_.get(), OverlapTimer::Part::kFull}};
  if (coarse_) out.push_back({coarse_.get(), OverlapTimer::Part::kWithoutReorder});
  return out;
}

void GemmProfileRun::trace_once() {
  const std::vector<overlap::GroupTimeline> timeline = timer_.traced_timeline(*traced_);
  double gemm_end = 0.0, comm_end = 0.0;
  for (const overlap::GroupTimeline& t : timeline) {
    gemm_end = std::max(gemm_end, t.compute_done_us);
    comm_end = std::max(comm_end, t.comm_done_us);
    if (curve_ && t.comm_done_us > t.comm_start_us) {
      slowdowns_.push_back((t.comm_done_us - t.comm_start_us) /
                           (1e6 * curve_->seconds_at(static_cast<double>(t.bytes))));
    }
  }
  gemm_ends_.push_back(gemm_end);
  comm_ends_.push_back(comm_end);
}

tune::GemmProfile GemmProfileRun::finish(std::span<const core::TimingStats> stats) {
  if (stats.size() != variants().size() || gemm_ends_.empty()) {
    throw Error("GemmProfileRun::finish: needs every variant's timings and a traced run");
  }
  tune::GemmProfile g;
  g.shape = timer_.shape();
  g.base_plan = tune::base_plan_string(plan_);
  g.launch = op_->launch();
  g.gemm_alone_us = stats[0].median;
  const double without_reorder = stats[1].median;
  g.reorder_us = std::max(stats[2].median - without_reorder, 0.0);
  comm::Communicator& comm = timer_.comm();
  cudaStream_t stream = nullptr;
  g.gemm_with_comm_us = max_over_ranks(comm, median_of(gemm_ends_), stream);
  g.traced_comm_end_us = max_over_ranks(comm, median_of(comm_ends_), stream);
  // Every rank joins the reduction, also one whose copies were all empty (no samples).
  const double slowdown = slowdowns_.empty() ? 0.0 : median_of(slowdowns_);
  const double slowest = max_over_ranks(comm, slowdown, stream);
  g.comm_slowdown = slowest > 0.0 ? std::max(slowest, 0.05) : 1.0;
  g.anchor_per_wave_us = without_reorder;
  if (coarse_) g.anchor_coarse_us = stats[3].median;
  // Anchor the model at the measured run (see GemmProfile::overhead_us); with no curve for this
  // plan the model cannot predict it, so the traced end stands in. With a coarse run too, the
  // cost every group pays beside the GEMM comes from the two runs' difference (fit_group_cost).
  if (curve_ && coarse_) {
    const tune::GroupCostFit fit =
        tune::fit_group_cost(tune::wave_profile_of(profile_, g, plan_), *curve_, without_reorder,
                             coarse_->plan().partition, stats[3].median);
    g.group_cost_us = fit.group_cost_us;
    g.overhead_us = fit.overhead_us;
    return g;
  }
  const double modelled_us =
      curve_ ? 1e6 * tune::predict(tune::wave_profile_of(profile_, g, plan_), *curve_,
                                   std::vector<int>(g.launch.waves(), 1))
                         .seconds
             : g.traced_comm_end_us;
  g.overhead_us = without_reorder - modelled_us;
  return g;
}

std::vector<tune::GemmProfile> measure_gemm_profiles(OverlapTimer& timer,
                                                     const tune::TunerProfile& profile,
                                                     const std::vector<Plan>& bases,
                                                     const TuneProfileOptions& o) {
  std::vector<std::unique_ptr<GemmProfileRun>> runs;
  std::vector<OverlapTimer::Variant> variants;
  for (const Plan& base : bases) {
    runs.push_back(std::make_unique<GemmProfileRun>(timer, profile, base));
    for (const OverlapTimer::Variant& v : runs.back()->variants()) variants.push_back(v);
  }
  timer.settle(runs.front()->op(), o.settle_seconds);
  const std::vector<core::TimingStats> stats =
      timer.time_variants(variants, o.warmup, o.gemm_iterations, o.rounds, [&](int) {
        for (auto& run : runs) run->trace_once();
      });
  std::vector<tune::GemmProfile> out;
  std::size_t first = 0;
  for (auto& run : runs) {
    const std::size_t count = run->variants().size();
    out.push_back(run->finish(std::span<const core::TimingStats>(stats).subspan(first, count)));
    first += count;
  }
  return out;
}

tune::GemmProfile measure_gemm_profile(OverlapTimer& timer, const tune::TunerProfile& profile,
                                       const Plan& base, const TuneProfileOptions& o) {
  return measure_gemm_profiles(timer, profile, {base}, o).front();
}

tune::TunerProfile measure_tuner_profile(comm::Communicator& comm, const TuneProfileOptions& o,
                                         const TuneProgress& progress) {
  if (o.shapes.empty() || o.base_plans.empty()) {
    throw UsageError("tune profile: needs at least one shape and one base plan");
  }
  const int sms = overlap::current_device_sms();
  const std::size_t element = core::dtype_size(o.dtype);
  tune::TunerProfile profile;
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, comm.device()));
  profile.device_name = prop.name;
  const auto hw = core::profile_for_device_name(prop.name);
  profile.device = hw ? hw->key : std::string(prop.name);
  profile.world = comm.size();
  profile.op = overlap::overlap_op_name(o.op);
  profile.dtype = core::dtype_name(o.dtype);
  profile.layout = overlap::weight_layout_name(o.layout);
  profile.sms = sms;

  // Which curves: copy engines, and NCCL per count of SMs the plans leave; the largest group is
  // a whole GEMM output.
  const std::vector<std::vector<Plan>> bases = shape_base_plans(comm, o, profile, progress);
  double largest = 0.0, granule = 0.0;
  std::vector<std::pair<std::string, int>> transports;
  for (std::size_t s = 0; s < o.shapes.size(); ++s) {
    const GemmShape& shape = o.shapes[s];
    for (const Plan& plan : bases[s]) {
      auto kernel = overlap::make_signaling_gemm(o.dtype, o.layout, plan.gemm);
      granule =
          std::max(granule, static_cast<double>(plan.gemm.tile.m) * plan.gemm.tile.n * element);
      const overlap::LaunchGeometry launch = kernel->geometry(shape, plan.schedule, sms);
      largest = std::max(largest, static_cast<double>(launch.slots) * plan.gemm.tile.m *
                                      plan.gemm.tile.n * static_cast<double>(element));
      const std::pair<std::string, int> t{overlap::transport_name(plan),
                                          overlap::collective_ctas_for(plan, launch, sms)};
      if (std::find(transports.begin(), transports.end(), t) == transports.end())
        transports.push_back(t);
    }
  }
  // NCCL's default communicator too: the serial plan's one call (tune::serial_candidate), so the
  // tuner can tell where overlapping does not pay.
  if (std::find(transports.begin(), transports.end(), std::pair<std::string, int>{"nccl", 0}) ==
      transports.end()) {
    transports.emplace_back("nccl", 0);
  }
  const std::vector<double> sizes =
      curve_sizes(std::min(o.min_curve_bytes, largest), largest, o.points_per_octave, granule);

  overlap::LimitedCommunicatorPool limited(comm);
  for (const auto& [transport, ctas] : transports) {
    tune::TransportCurve curve;
    curve.transport = transport;
    curve.nccl_ctas = ctas;
    curve.bytes = sizes;
    overlap::LimitedCommunicator* lc = transport == "nccl" ? limited.get(ctas) : nullptr;
    curve.us = measure_curve(comm, o, curve, sizes, lc, progress);
    profile.curves.push_back(std::move(curve));
    if (o.probe_nccl_sms && transport == "nccl") {
      profile.nccl_sms.push_back(probe_nccl(comm, lc ? lc->get() : comm.get(), ctas, o.dtype));
      if (progress) progress(5.0, "NCCL SM probe");
    }
  }
  if (o.probe_nccl_sms &&
      std::none_of(profile.nccl_sms.begin(), profile.nccl_sms.end(),
                   [](const tune::NcclSmMeasurement& m) { return m.ctas_limit == 0; })) {
    profile.nccl_sms.push_back(probe_nccl(comm, comm.get(), 0, o.dtype));
  }

  // Per shape, every base plan's runs interleaved in the same rounds: the chip's clock swings by
  // 10-20% over seconds at its power cap (run-5 dmon), so plans timed at different moments would
  // differ by the moment as much as by the plan.
  for (std::size_t s = 0; s < o.shapes.size(); ++s) {
    const GemmShape& shape = o.shapes[s];
    OverlapTimer timer(comm, o.op, o.dtype, o.layout, shape);
    for (tune::GemmProfile& g : measure_gemm_profiles(timer, profile, bases[s], o))
      profile.gemms.push_back(std::move(g));
    if (progress) {
      progress(20.0 * static_cast<double>(o.base_plans.size()),
               fmt::format("GEMM {}x{}x{}", shape.m, shape.n, shape.k));
    }
  }
  return profile;
}

}  // namespace kiln::tune
