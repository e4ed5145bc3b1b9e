// kiln's PyTorch ops on the overlap runtime (see overlap_ops.hpp).
#include "overlap_ops.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "group_registry.hpp"
#include "overlap/contiguous_scatter.hpp"
#include "overlap/plan.hpp"
#include "rank_agreement.hpp"
#include "tensor_checks.hpp"
#include "tune/automatic_plan.hpp"

namespace kiln::torch_ops {

namespace {

// Runs `body`, turning kiln's errors into Python exceptions that name the op: a usage error
// (bad shape, a plan that cannot run it) into ValueError, any other into RuntimeError.
[[noreturn]] void raise(bool usage, const std::string& op, const char* what) {
  if (usage) TORCH_CHECK_VALUE(false, op, ": ", what);
  TORCH_CHECK(false, op, ": ", what);
  throw std::logic_error("unreachable");
}

template <class Body>
decltype(auto) translated(const std::string& op, Body&& body) {
  try {
    return body();
  } catch (const kiln::UsageError& e) {
    raise(true, op, e.what());
  } catch (const kiln::Error& e) {
    raise(false, op, e.what());
  }
}

int checked_int(const std::string& op, const char* what, int64_t v) {
  TORCH_CHECK_VALUE(v > 0 && v <= INT32_MAX, op, ": ", what, " = ", v,
                    " is outside kiln's GEMM range [1, 2^31 - 1]");
  return static_cast<int>(v);
}

// The plan this rank's device runs after rank 0's lookup: the tuner's, or kiln's default where
// the tuner's cannot (a ReduceScatter tile that cannot reorder rows for contiguous blocks, groups
// that do not fit the padded shape's waves); a UsageError naming both reasons when neither can.
// A ReduceScatter over several ranks whose M splits into whole tiles per rank gets PyTorch's
// contiguous row blocks from the runtime itself (OverlapOptions::contiguous_rows: no copy of A),
// rastered along M, unless that would slow a tall GEMM; any other reorders A's rows before the
// GEMM (padded_m rows).
struct PreparedPlan {
  overlap::Plan plan;
  std::string source;
  int padded_m = 0;
  bool fallback = false;         // the default instead of the tuner's
  bool contiguous_rows = false;  // the runtime's contiguous row blocks
  // Either layout could win (a tall GEMM rastered along N): both are built and timed at
  // creation (choose_layout_by_timing); padded_m is then the copy path's.
  bool timed_choice = false;
};

PreparedPlan prepare_plan(const tune::PlanLookup& lookup, overlap::OverlapOp op,
                          const overlap::GemmShape& shape, core::DType dtype, int world) {
  const auto [m, n, k] = shape;
  const int sms = overlap::current_device_sms();
  // Plans rastered along M, and wide or square GEMMs, where the searches chose raster m as often
  // as n (docs/results/2026-11-24-gemm-configs/), take the layout. A tall GEMM (M > N) whose plan
  // is rastered along N may lose more to the raster along M the layout needs (16384x8192x4096:
  // 29-31%, overlap::contiguous_rows_plan) than to the copy of A (10-11% there): it is timed.
  const auto contiguous_runs = [&](const overlap::Plan& plan) {
    return op == overlap::OverlapOp::kReduceScatter && world > 1 &&
           overlap::GemmCollective::can_implement(
               op, shape, dtype, overlap::contiguous_rows_plan(plan), world, sms, true)
               .empty();
  };
  // (Rastered along C's M already: the layout's plan keeps the raster; for a kernel run on Cᵀ
  // that is the scheduler's N, overlap::contiguous_rows_plan.)
  const auto contiguous = [&](const overlap::Plan& plan) {
    const bool along_m =
        overlap::contiguous_rows_plan(plan).schedule.raster_along_n == plan.schedule.raster_along_n;
    return (along_m || m <= n) && contiguous_runs(plan);
  };
  // The copy path: A's rows reordered (padded to whole tiles) for the block-cyclic layout.
  const auto copy_rows = [&](const overlap::Plan& plan) {
    if (op != overlap::OverlapOp::kReduceScatter || world == 1) return m;
    return overlap::contiguous_scatter_rows(m, world, plan.gemm.tile.m).padded_m;
  };
  const auto copy_why_not = [&](const overlap::Plan& plan) -> std::string {
    try {
      return overlap::GemmCollective::can_implement(op, {copy_rows(plan), n, k}, dtype, plan, world,
                                                    sms);
    } catch (const UsageError& e) {
      return e.what();
    }
  };
  const auto why_not = [&](const overlap::Plan& plan) -> std::string {
    return contiguous_runs(plan) ? "" : copy_why_not(plan);
  };
  PreparedPlan p{lookup.plan, lookup.source};
  if (const std::string why = why_not(p.plan); !why.empty()) {
    const overlap::Plan fallback = tune::default_overlap_plan();
    const std::string why_default = why_not(fallback);
    if (!why_default.empty()) {
      throw UsageError(
          fmt::format("no plan runs {}x{}x{} over {} ranks: the tuner's ({}): {}; the "
                      "default ({}): {}",
                      m, n, k, world, overlap::to_string(p.plan), why, overlap::to_string(fallback),
                      why_default));
    }
    p.plan = fallback;
    p.source = fmt::format("default (the tuner's {} cannot: {})", lookup.source, why);
    p.fallback = true;
  }
  const bool copy_runs = copy_why_not(p.plan).empty();
  p.contiguous_rows = contiguous(p.plan) || (contiguous_runs(p.plan) && !copy_runs);
  p.timed_choice = !p.contiguous_rows && contiguous_runs(p.plan);
  p.padded_m = p.contiguous_rows ? m : copy_rows(p.plan);
  if (p.contiguous_rows) p.plan = overlap::contiguous_rows_plan(p.plan);
  return p;
}

// Refuses when this device has less free memory than the object's workspace (plain cudaMalloc,
// outside PyTorch's caching allocator), before the constructor: out of memory is the likely local
// failure, and inside the constructor it could strike between NCCL calls that every rank must
// reach. PyTorch's cached free blocks go back to the device first when they are needed.
void check_workspace_fits(overlap::OverlapOp op, const overlap::GemmShape& shape, core::DType dtype,
                          const overlap::Plan& plan, int world, bool contiguous_rows) {
  const std::size_t need = overlap::GemmCollective::workspace_bytes(
      op, shape, dtype, plan, world, overlap::current_device_sms(), contiguous_rows);
  const auto free_bytes = [] {
    std::size_t free = 0, total = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  };
  if (free_bytes() >= need) return;
  c10::cuda::CUDACachingAllocator::emptyCache();
  if (const std::size_t free = free_bytes(); free < need) {
    throw Error(fmt::format(
        "out of device memory: the overlap object's workspace needs {:.1f} MiB, {:.1f} MiB are "
        "free",
        need / 1048576.0, free / 1048576.0));
  }
}

// The ranks must run one plan: a device that cannot run the tuner's plan while another can (their
// SM counts differ), or the same plan in the other ReduceScatter layout, is refused on every rank,
// naming the ranks on each side. (Reports' values: layout, fallback, contiguous rows.)
void require_same_plan(const RankReports& reports, const std::string& what) {
  const auto split = [&](std::size_t field) {
    std::vector<int> off, on;
    for (std::size_t r = 0; r < reports.values.size(); ++r) {
      (reports.values[r][field] != 0 ? on : off).push_back(static_cast<int>(r));
    }
    return std::pair{off, on};
  };
  if (const auto [tuned, fallen_back] = split(1); !tuned.empty() && !fallen_back.empty()) {
    throw UsageError(fmt::format(
        "{}: the tuner's plan runs on rank(s) {} but not on rank(s) {}, which would take kiln's "
        "default (do their GPUs differ?); every rank must run the same plan",
        what, fmt::join(tuned, ", "), fmt::join(fallen_back, ", ")));
  }
  if (const auto [reordered, contiguous] = split(2); !reordered.empty() && !contiguous.empty()) {
    throw UsageError(fmt::format(
        "{}: rank(s) {} would scatter contiguous row blocks from the GEMM and rank(s) {} would "
        "reorder A's rows (do their GPUs differ?); every rank must run the same layout",
        what, fmt::join(contiguous, ", "), fmt::join(reordered, ", ")));
  }
}

overlap::MatrixRef weight_ref(const WeightView& w, core::DType dtype);
at::Tensor reorder_rows_for_scatter(const at::Tensor& a2, const overlap::ContiguousScatterRows& c);

// Random operands of `shape` for the timings at creation: A (M x K) and B in `layout`.
struct TimingOperands {
  at::Tensor a;
  WeightView w;
};

TimingOperands timing_operands(const overlap::GemmShape& shape, core::DType dtype,
                               overlap::WeightLayout layout, std::uint64_t seed) {
  const auto options = at::TensorOptions()
                           .device(at::kCUDA, c10::cuda::current_device())
                           .dtype(dtype == core::DType::kBf16 ? at::kBFloat16 : at::kHalf);
  // A generator of its own: drawing from PyTorch's default one would shift the user's random
  // stream at the op's first call.
  at::Generator generator = at::cuda::detail::createCUDAGenerator(c10::cuda::current_device());
  generator.set_current_seed(seed);
  at::Tensor a = at::randn({shape.m, shape.k}, generator, options);
  const bool nk = layout == overlap::WeightLayout::kNK;
  return {std::move(a), WeightView{nk ? at::randn({shape.n, shape.k}, generator, options)
                                      : at::randn({shape.k, shape.n}, generator, options),
                                   layout, shape.k, shape.n}};
}

// This rank's time (us) of `first` and `second` (each enqueues its work on `stream`),
// interleaved: medians of 5 after 2 warm-ups, CUDA events on `stream`.
template <class First, class Second>
std::pair<double, double> interleaved_medians(First&& first, Second&& second, cudaStream_t stream) {
  constexpr int kWarmup = 2, kTimed = 5;
  std::vector<cudaEvent_t> events(4 * (kWarmup + kTimed));
  for (cudaEvent_t& e : events) C10_CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < kWarmup + kTimed; ++i) {
    C10_CUDA_CHECK(cudaEventRecord(events[4 * i], stream));
    first();
    C10_CUDA_CHECK(cudaEventRecord(events[4 * i + 1], stream));
    C10_CUDA_CHECK(cudaEventRecord(events[4 * i + 2], stream));
    second();
    C10_CUDA_CHECK(cudaEventRecord(events[4 * i + 3], stream));
  }
  C10_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> first_us, second_us;
  for (int i = kWarmup; i < kWarmup + kTimed; ++i) {
    float ms = 0.0f;
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, events[4 * i], events[4 * i + 1]));
    first_us.push_back(1e3f * ms);
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, events[4 * i + 2], events[4 * i + 3]));
    second_us.push_back(1e3f * ms);
  }
  for (cudaEvent_t& e : events) C10_CUDA_CHECK(cudaEventDestroy(e));
  const auto median = [](std::vector<float> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  return {median(first_us), median(second_us)};
}

// Every rank's pair of times (`timing` fills this rank's), agreed: the slowest rank's of each, so
// that every rank takes the same decision from them. `what` names the step.
template <class Timing>
std::pair<double, double> slowest_rank_times(Group& group, Timing&& timing,
                                             const std::string& what) {
  std::pair<double, double> times;
  StepReport timed = attempt([&] { times = timing(); });
  // Tenths of a microsecond, clamped into an int32.
  const auto tenths = [](double us) {
    return static_cast<std::int32_t>(std::clamp(us * 10.0, 0.0, 2.0e9));
  };
  timed.values = {tenths(times.first), tenths(times.second)};
  const RankReports reports = group.agreement->require_all(timed, what);
  std::int32_t first = 0, second = 0;
  for (const std::vector<std::int32_t>& v : reports.values) {
    first = std::max(first, v[0]);
    second = std::max(second, v[1]);
  }
  return {first / 10.0, second / 10.0};
}

// This rank's GEMM time (us) of the two ReduceScatter layouts on random operands of `shape`: the
// copy path (A's rows reordered, then the block-cyclic object's GEMM) and the contiguous object's
// GEMM, interleaved; the GEMMs alone (run_gemm_only): the collectives and reorders after them are
// alike in both layouts.
std::pair<double, double> time_layouts(overlap::GemmCollective& copy,
                                       overlap::GemmCollective& contiguous,
                                       const overlap::GemmShape& shape, core::DType dtype,
                                       overlap::WeightLayout layout, int world) {
  const TimingOperands t = timing_operands(shape, dtype, layout, 20261125);
  const overlap::MatrixRef b = weight_ref(t.w, dtype);
  const overlap::ContiguousScatterRows rows =
      overlap::contiguous_scatter_rows(shape.m, world, copy.plan().gemm.tile.m);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  return interleaved_medians(
      [&] {
        const at::Tensor reordered = reorder_rows_for_scatter(t.a, rows);
        copy.run_gemm_only({reordered.data_ptr(), dtype, rows.padded_m, shape.k}, b, stream);
      },
      [&] {
        contiguous.run_gemm_only({t.a.data_ptr(), dtype, shape.m, shape.k}, b, stream);
      },
      stream);
}

// The timed choice between the copy path (`cached`, as built) and contiguous row blocks for a
// tall GEMM rastered along N (PreparedPlan::timed_choice): each rank times both (time_layouts),
// the times travel in the agreement, and every rank keeps the layout whose slowest rank is faster
// (the same decision everywhere); the other object is dropped on every rank alike. The plan
// source says which and why.
void choose_layout_by_timing(Group& group, CachedCollective& cached,
                             std::unique_ptr<overlap::GemmCollective>& contiguous,
                             const overlap::GemmShape& shape, core::DType dtype,
                             const std::string& what) {
  const auto [copy_worst, contiguous_worst] = slowest_rank_times(
      group,
      [&] {
        return time_layouts(*cached.collective, *contiguous, shape, dtype, cached.layout,
                            group.comm->size());
      },
      what + ": timing the layouts");
  const std::string timing = fmt::format(
      "GEMM {:.1f} us with contiguous rows (raster m) against {:.1f} us with the copy of A, "
      "timed at creation, slowest rank",
      contiguous_worst, copy_worst);
  if (contiguous_worst <= copy_worst) {
    cached.collective = std::move(contiguous);
    cached.contiguous_rows = true;
    cached.padded_m = shape.m;
    cached.plan_source += "; contiguous rows: " + timing;
  } else {
    contiguous.reset();
    cached.plan_source += "; copy of A: " + timing;
  }
}

// Which ReduceScatter algorithm the op runs, from $KILN_TORCH_RS_ALGORITHM: "auto" (unset) times
// kiln's plan against the chunked ReduceScatter at creation and keeps the faster; "plan" and
// "chunked" force one (for A/B runs). On 4xH200 the chunked algorithm took 0.79-0.95 of the plan's
// time on 4 of 6 shapes and 1.06 on another (docs/results/2026-11-28-h200-x4/): neither wins
// everywhere, and the tuner has no model of it, so it is timed.
enum class RsAlgorithm : std::int32_t { kAuto = 0, kPlan = 1, kChunked = 2 };

RsAlgorithm rs_algorithm_setting() {
  const char* value = std::getenv("KILN_TORCH_RS_ALGORITHM");
  const std::string text = value != nullptr ? value : "";
  if (text.empty() || text == "auto") return RsAlgorithm::kAuto;
  if (text == "plan") return RsAlgorithm::kPlan;
  if (text == "chunked") return RsAlgorithm::kChunked;
  throw UsageError(fmt::format(
      "KILN_TORCH_RS_ALGORITHM=\"{}\": accepted values are auto (or unset), plan and chunked",
      text));
}

// This rank's time (us) of the whole ReduceScatter op by kiln's plan (`cached.collective`, with
// the copy of A's rows where its layout needs one) and by `chunked`, on random operands of
// `shape`, interleaved. Both are collectives: every rank runs the same sequence.
std::pair<double, double> time_rs_algorithms(const CachedCollective& cached,
                                             overlap::ChunkedReduceScatter& chunked,
                                             const overlap::GemmShape& shape, core::DType dtype,
                                             int world) {
  const TimingOperands t = timing_operands(shape, dtype, cached.layout, 20261128);
  const overlap::MatrixRef b = weight_ref(t.w, dtype);
  overlap::GemmCollective& plan = *cached.collective;
  const at::Tensor plan_out = at::empty({plan.output_rows(), shape.n}, t.a.options());
  const at::Tensor chunked_out = at::empty({shape.m / world, shape.n}, t.a.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  return interleaved_medians(
      [&] {
        const at::Tensor a_gemm =
            cached.contiguous_rows
                ? t.a
                : reorder_rows_for_scatter(t.a, overlap::contiguous_scatter_rows(
                                                    shape.m, world, plan.plan().gemm.tile.m));
        plan.run({a_gemm.data_ptr(), dtype, cached.padded_m, shape.k}, b,
                 {plan_out.data_ptr(), dtype, plan.output_rows(), shape.n}, stream);
      },
      [&] { chunked.run(t.a.data_ptr(), t.w.storage.data_ptr(), chunked_out.data_ptr(), stream); },
      stream);
}

// The ReduceScatter's algorithm (a multi-rank ReduceScatter's cached object, built from the
// plan): kiln's plan or the chunked ReduceScatter, by rs_algorithm_setting. Every step is agreed
// across ranks (the chunked object's constructor and the runs timed are collective), so every
// rank keeps the same one; the other is dropped on every rank alike. A chunked object that cannot
// run the shape, or whose workspace does not fit on some rank, leaves the plan (an error where
// "chunked" was asked for). The plan source says which and why.
void choose_rs_algorithm(Group& group, CachedCollective& cached, const overlap::GemmShape& shape,
                         core::DType dtype, const std::string& what) {
  const int world = group.comm->size();
  RsAlgorithm setting = RsAlgorithm::kAuto;
  std::string cannot;
  bool fits = false;
  StepReport ready = attempt([&] {
    setting = rs_algorithm_setting();
    cannot = overlap::ChunkedReduceScatter::can_implement(shape, dtype, world);
    if (!cannot.empty() || setting == RsAlgorithm::kPlan) return;
    const std::size_t need = overlap::ChunkedReduceScatter::workspace_bytes(shape, dtype, world);
    std::size_t free = 0, total = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (free < need) c10::cuda::CUDACachingAllocator::emptyCache();
    C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    fits = free >= need;
  });
  ready.values = {static_cast<std::int32_t>(setting), cannot.empty() ? 1 : 0, fits ? 1 : 0};
  const RankReports reports = group.agreement->require_all(ready, what + ": the chunked algorithm");
  bool every_fits = true;
  for (const std::vector<std::int32_t>& v : reports.values) {
    if (v[0] != reports.values[0][0]) {
      throw UsageError(what +
                       ": KILN_TORCH_RS_ALGORITHM differs between the ranks; every rank "
                       "must run the same ReduceScatter algorithm");
    }
    every_fits = every_fits && v[2] != 0;
  }
  if (setting == RsAlgorithm::kPlan) return;
  const std::string refused = !cannot.empty() ? cannot
                              : !every_fits
                                  ? "its workspace does not fit in free device memory on every rank"
                                  : "";
  if (!refused.empty()) {
    if (setting == RsAlgorithm::kChunked) {
      throw UsageError(
          fmt::format("{}: KILN_TORCH_RS_ALGORITHM=chunked, but the chunked "
                      "ReduceScatter cannot: {}",
                      what, refused));
    }
    cached.plan_source += "; chunked ReduceScatter not considered: " + refused;
    return;
  }
  std::unique_ptr<overlap::ChunkedReduceScatter> chunked;
  const StepReport built = attempt([&] {
    chunked = std::make_unique<overlap::ChunkedReduceScatter>(
        *group.comm, shape, dtype, cached.layout, overlap::current_device_sms());
  });
  group.agreement->require_all(built, what + ": building the chunked ReduceScatter");
  std::string reason = "KILN_TORCH_RS_ALGORITHM=chunked";
  if (setting == RsAlgorithm::kAuto) {
    const auto [plan_worst, chunked_worst] = slowest_rank_times(
        group, [&] { return time_rs_algorithms(cached, *chunked, shape, dtype, world); },
        what + ": timing the ReduceScatter algorithms");
    reason =
        fmt::format("{:.1f} us against {:.1f} us for the plan, timed at creation, slowest rank",
                    chunked_worst, plan_worst);
    if (chunked_worst >= plan_worst) {
      cached.plan_source += "; kept over the chunked ReduceScatter: " + reason;
      chunked.reset();
      return;
    }
  }
  cached.plan_source +=
      "; runs as the chunked ReduceScatter (cuBLAS per destination chunk + "
      "copy engines): " +
      reason;
  cached.chunked = std::move(chunked);
  cached.collective.reset();
  cached.contiguous_rows = true;  // its output is PyTorch's row blocks; A goes in as it is
  cached.padded_m = shape.m;
}

// The overlap object for (op, shape, dtype) on `group`, made in steps that every rank takes
// together (every rank calls the op in the same order): rank 0's plan lookup, which
// tune::automatic_plan broadcasts (or its error); this rank's preparation (the plan its device
// runs, the room for its workspace), agreed across ranks together with B's layout, where rank 0's
// wins; then the constructor (NCCL calls of its own: a communicator split, a peer-memory
// exchange), whose success is agreed too. So every rank caches the object or every rank raises.
// Limit: a rank whose constructor fails between its own NCCL calls leaves the others in a
// mismatched call; the communicator's timeout ends that (TimeoutError), it cannot agree on it.
CachedCollective create_collective(Group& group, overlap::OverlapOp op,
                                   const overlap::GemmShape& shape, core::DType dtype,
                                   overlap::WeightLayout layout) {
  comm::Communicator& comm = *group.comm;
  const int world = comm.size();
  const std::string what = fmt::format("creating the {} overlap object for {}x{}x{}",
                                       overlap::overlap_op_name(op), shape.m, shape.n, shape.k);
  const tune::PlanLookup lookup = tune::automatic_plan(comm, op, shape, dtype);
  PreparedPlan prepared;
  StepReport ready = attempt([&] {
    prepared = prepare_plan(lookup, op, shape, dtype, world);
    check_workspace_fits(op, {prepared.padded_m, shape.n, shape.k}, dtype, prepared.plan, world,
                         prepared.contiguous_rows);
  });
  ready.values = {static_cast<std::int32_t>(layout), prepared.fallback ? 1 : 0,
                  prepared.contiguous_rows ? 1 : 0};
  const RankReports reports = group.agreement->require_all(ready, what);
  require_same_plan(reports, what);
  CachedCollective cached;
  cached.layout = static_cast<overlap::WeightLayout>(reports.values[0][0]);  // rank 0's
  cached.padded_m = prepared.padded_m;
  cached.plan_source = prepared.source;
  cached.contiguous_rows = prepared.contiguous_rows;
  std::unique_ptr<overlap::GemmCollective> contiguous;  // the timed choice's other candidate
  const overlap::Plan contiguous_plan = overlap::contiguous_rows_plan(prepared.plan);
  const StepReport built = attempt([&] {
    overlap::OverlapOptions options;
    options.contiguous_rows = prepared.contiguous_rows;
    cached.collective = std::make_unique<overlap::GemmCollective>(
        op, overlap::GemmShape{cached.padded_m, shape.n, shape.k}, dtype, cached.layout, comm,
        prepared.plan, options);
    if (prepared.timed_choice) {
      check_workspace_fits(op, shape, dtype, contiguous_plan, world, true);
      options.contiguous_rows = true;
      contiguous = std::make_unique<overlap::GemmCollective>(op, shape, dtype, cached.layout, comm,
                                                             contiguous_plan, options);
    }
  });
  // A rank whose peers failed drops its objects here (while unwinding), as they did theirs.
  group.agreement->require_all(built, what);
  if (prepared.timed_choice) choose_layout_by_timing(group, cached, contiguous, shape, dtype, what);
  if (op == overlap::OverlapOp::kReduceScatter && world > 1)
    choose_rs_algorithm(group, cached, shape, dtype, what);
  return cached;
}

// The cached overlap object for (op, shape, dtype) on `group`, made on first use (see
// create_collective; `layout`, this rank's B, is only a proposal there).
CachedCollective& collective_for(Group& group, overlap::OverlapOp op, int m, int n, int k,
                                 core::DType dtype, overlap::WeightLayout layout) {
  const Group::Key key{overlap::overlap_op_name(op), m, n, k, static_cast<int>(dtype)};
  if (auto it = group.collectives.find(key); it != group.collectives.end()) return it->second;
  CachedCollective made = create_collective(group, op, {m, n, k}, dtype, layout);
  return group.collectives.emplace(key, std::move(made)).first->second;
}

overlap::MatrixRef weight_ref(const WeightView& w, core::DType dtype) {
  return w.layout == overlap::WeightLayout::kKN
             ? overlap::MatrixRef{w.storage.data_ptr(), dtype, w.k, w.n}
             : overlap::MatrixRef{w.storage.data_ptr(), dtype, w.n, w.k};
}

// A' for a contiguous-block ReduceScatter (overlap/contiguous_scatter.hpp): A's rows reordered
// (and padded with zero rows) so that the block-cyclic layout delivers rank j the rows
// [j*q, (j+1)*q). The reordering moves whole chunks of rps rows (rps*K contiguous elements): chunk
// t of rank block j goes to tile t's subtile j. Chunks above 256 KiB go by one 2-D copy per rank
// block (width rps*K, source pitch rps*K, destination pitch BM*K); smaller ones by ATen's strided
// copy, which was faster there (H100: 52 against 112 us at 4096x8192x2048 over 8 ranks, 165
// against 192 us at 8192^3 over 2; docs/results/2026-11-25-torch-ops/).
constexpr std::size_t kMemcpy2dMinChunkBytes = 256 * 1024;

at::Tensor reorder_rows_for_scatter(const at::Tensor& a2, const overlap::ContiguousScatterRows& c) {
  const int64_t k = a2.size(1), w = c.world, rps = c.rows_per_subtile, q = c.rows_per_rank;
  const int64_t element = a2.element_size();
  const int64_t whole = q / rps, rest = q - whole * rps;
  const std::size_t chunk = static_cast<std::size_t>(rps * k * element);
  if (chunk <= kMemcpy2dMinChunkBytes) {
    at::Tensor permuted = at::empty({c.tile_rows, w, rps, k}, a2.options());
    const at::Tensor source = a2.view({w, q, k});
    if (whole > 0) {
      permuted.narrow(0, 0, whole)
          .permute({1, 0, 2, 3})
          .copy_(source.narrow(1, 0, whole * rps).view({w, whole, rps, k}));
    }
    if (rest > 0) {
      at::Tensor last = permuted.select(0, whole);
      last.narrow(1, 0, rest).copy_(source.narrow(1, whole * rps, rest));
      last.narrow(1, rest, rps - rest).zero_();
    }
    return permuted.view({static_cast<int64_t>(c.padded_m), k});
  }
  at::Tensor permuted = at::empty({c.padded_m, k}, a2.options());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  const auto* source = static_cast<const char*>(a2.data_ptr());
  auto* target = static_cast<char*>(permuted.data_ptr());
  const std::size_t tile = static_cast<std::size_t>(c.tile_m * k * element);
  for (int64_t j = 0; j < w; ++j) {
    const char* from = source + j * q * k * element;
    char* to = target + j * rps * k * element;
    if (whole > 0) {
      C10_CUDA_CHECK(cudaMemcpy2DAsync(to, tile, from, chunk, chunk,
                                       static_cast<std::size_t>(whole), cudaMemcpyDeviceToDevice,
                                       stream));
    }
    if (rest > 0) {  // the last tile row: q's remainder, then zero rows up to the subtile's end
      const std::size_t part = static_cast<std::size_t>(rest * k * element);
      C10_CUDA_CHECK(cudaMemcpyAsync(to + whole * tile, from + whole * chunk, part,
                                     cudaMemcpyDeviceToDevice, stream));
      C10_CUDA_CHECK(cudaMemsetAsync(to + whole * tile + part, 0, chunk - part, stream));
    }
  }
  return permuted;
}

std::vector<int64_t> with_last(at::IntArrayRef sizes, int64_t first_scale_num,
                               int64_t first_scale_den, int64_t last) {
  std::vector<int64_t> shape(sizes.begin(), sizes.end());
  shape.front() = shape.front() * first_scale_num / first_scale_den;
  shape.back() = last;
  return shape;
}

int64_t normalized_dim(int64_t dim, int64_t dims) {
  return dim < 0 ? dim + dims : dim;
}

// The group an op names, locked for the op (a ValueError naming kiln.init_group when it was never
// registered or was released).
LockedGroup group_named(const std::string& op, const std::string& group_name) {
  return translated(op, [&] { return GroupRegistry::instance().lock(group_name); });
}

// A (the dimension to split already first) as the 2-D M x K matrix the GEMM takes, and B beside
// it: the shape checks every GEMM op shares.
struct GemmOperands {
  at::Tensor a2;
  int m = 0, k = 0;
  WeightView w;
  core::DType dtype = core::DType::kBf16;
};

GemmOperands gemm_operands(const std::string& op, const at::Tensor& a, const at::Tensor& b) {
  GemmOperands g;
  g.a2 = rows_of(a);
  g.m = checked_int(op, "M (A's rows)", g.a2.size(0));
  g.k = checked_int(op, "K", g.a2.size(1));
  g.w = weight_view(op, "B", b, g.k);
  g.dtype = kiln_dtype(a);
  return g;
}

}  // namespace

at::Tensor fused_matmul_reduce_scatter(const at::Tensor& a, const at::Tensor& b,
                                       const std::string& reduce_op, int64_t scatter_dim,
                                       const std::string& group_name) {
  const std::string op = "kiln::fused_matmul_reduce_scatter";
  check_matrix_operand(op, "A", a);
  check_same_kind(op, "B", b, a);
  TORCH_CHECK_VALUE(reduce_op == "sum" || reduce_op == "avg", op, ": reduce_op must be \"sum\" or ",
                    "\"avg\", got \"", reduce_op, "\"");
  const int64_t dim = normalized_dim(scatter_dim, a.dim());
  TORCH_CHECK_VALUE(dim >= 0 && dim < a.dim() - 1, op, ": scatter_dim must name one of A's ",
                    "leading dimensions (0..", a.dim() - 2, ", or negative), got ", scatter_dim,
                    " for A of ", a.dim(), " dimensions");
  refuse_graph_capture(op);
  const c10::cuda::CUDAGuard guard(a.device());
  const LockedGroup locked = group_named(op, group_name);
  Group& group = *locked;
  const int world = group.comm->size();
  TORCH_CHECK_VALUE(a.size(dim) % world == 0, op, ": A's dimension ", dim, " (", a.size(dim),
                    ") must be divisible by the group's world size ", world);
  // The scattered dimension first: rank r's result is then the contiguous row block r.
  const at::Tensor moved = a.movedim(dim, 0);
  const auto [a2, m, k, w, dtype] = gemm_operands(op, moved, b);
  return translated(op, [&] {
    CachedCollective& c =
        collective_for(group, overlap::OverlapOp::kReduceScatter, m, w.n, k, dtype, w.layout);
    const WeightView b_run = with_layout(w, c.layout);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    at::Tensor result;
    if (c.chunked) {  // PyTorch's row blocks from A as it is (choose_rs_algorithm)
      result = at::empty({m / world, w.n}, a.options());
      c.chunked->run(a2.data_ptr(), b_run.storage.data_ptr(), result.data_ptr(), stream);
    } else {
      // One rank owns every row, in order, or the runtime writes contiguous row blocks itself:
      // nothing to reorder.
      const at::Tensor a_gemm =
          world == 1 || c.contiguous_rows
              ? a2
              : reorder_rows_for_scatter(a2, overlap::contiguous_scatter_rows(
                                                 m, world, c.collective->plan().gemm.tile.m));
      at::Tensor out = at::empty({c.collective->output_rows(), w.n}, a.options());
      c.collective->run({a_gemm.data_ptr(), dtype, c.padded_m, k}, weight_ref(b_run, dtype),
                        {out.data_ptr(), dtype, c.collective->output_rows(), w.n}, stream);
      result = out.narrow(0, 0, m / world);
    }
    if (reduce_op == "avg") result.div_(world);
    const at::Tensor shaped = result.view(with_last(moved.sizes(), 1, world, w.n));
    return dim == 0 ? shaped : shaped.movedim(0, dim).contiguous();
  });
}

at::Tensor matmul_all_reduce(const at::Tensor& a, const at::Tensor& b,
                             const std::string& group_name) {
  return matmul_all_reduce_rmsnorm(a, b, at::Tensor(), 0.0, group_name);
}

at::Tensor matmul_all_reduce_rmsnorm(const at::Tensor& a, const at::Tensor& b,
                                     const at::Tensor& weight, double eps,
                                     const std::string& group_name) {
  const bool norm = weight.defined();
  const std::string op = norm ? "kiln::matmul_all_reduce_rmsnorm" : "kiln::matmul_all_reduce";
  check_matrix_operand(op, "A", a);
  check_same_kind(op, "B", b, a);
  if (norm) {
    check_same_kind(op, "weight", weight, a);
    TORCH_CHECK_VALUE(weight.dim() == 1 && weight.size(0) == b.size(1), op,
                      ": weight must be 1-D of B's N = ", b.size(1), " elements, got shape ",
                      weight.sizes());
    TORCH_CHECK_VALUE(eps > 0.0, op, ": eps must be > 0, got ", eps);
  }
  refuse_graph_capture(op);
  const c10::cuda::CUDAGuard guard(a.device());
  const LockedGroup locked = group_named(op, group_name);
  const auto [a2, m, k, w, dtype] = gemm_operands(op, a, b);
  return translated(op, [&] {
    CachedCollective& c =
        collective_for(*locked, overlap::OverlapOp::kAllReduce, m, w.n, k, dtype, w.layout);
    const overlap::MatrixRef b_ref = weight_ref(with_layout(w, c.layout), dtype);
    at::Tensor out = at::empty({m, w.n}, a.options());
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    if (norm) {
      const at::Tensor gamma = weight.contiguous();
      c.collective->run_rmsnorm({a2.data_ptr(), dtype, m, k}, b_ref,
                                {gamma.data_ptr(), dtype, 1, w.n}, static_cast<float>(eps),
                                {out.data_ptr(), dtype, m, w.n}, stream);
    } else {
      c.collective->run({a2.data_ptr(), dtype, m, k}, b_ref, {out.data_ptr(), dtype, m, w.n},
                        stream);
    }
    return out.view(with_last(a.sizes(), 1, 1, w.n));
  });
}

std::tuple<std::optional<at::Tensor>, std::vector<at::Tensor>> fused_all_gather_matmul(
    const at::Tensor& a_shard, const std::vector<at::Tensor>& bs, int64_t gather_dim,
    const std::string& group_name, bool return_a) {
  const std::string op = "kiln::fused_all_gather_matmul";
  check_matrix_operand(op, "A", a_shard);
  TORCH_CHECK_VALUE(!bs.empty(), op, ": Bs must hold at least one matrix");
  for (std::size_t i = 0; i < bs.size(); ++i) {
    check_same_kind(op, fmt::format("Bs[{}]", i), bs[i], a_shard);
    TORCH_CHECK_VALUE(bs[i].dim() == 2 && bs[i].size(0) == a_shard.size(-1), op, ": Bs[", i,
                      "] must be K x N with K = ", a_shard.size(-1), " (A's last dimension)",
                      ", got shape ", bs[i].sizes());
  }
  const int64_t dim = normalized_dim(gather_dim, a_shard.dim());
  TORCH_CHECK_VALUE(dim >= 0 && dim < a_shard.dim() - 1, op, ": gather_dim must name one of A's ",
                    "leading dimensions (0..", a_shard.dim() - 2, ", or negative), got ",
                    gather_dim, " for A of ", a_shard.dim(), " dimensions");
  refuse_graph_capture(op);
  const c10::cuda::CUDAGuard guard(a_shard.device());
  const LockedGroup locked = group_named(op, group_name);
  Group& group = *locked;
  comm::Communicator& comm = *group.comm;
  const int world = comm.size(), rank = comm.rank();
  // The gathered dimension first: the shards are then contiguous row blocks of the gathered A.
  const at::Tensor moved = a_shard.movedim(dim, 0);
  const at::Tensor a2 = rows_of(moved);
  const int64_t m0 = a2.size(0), k = a2.size(1);
  at::Tensor a_full = at::empty({world * m0, k}, a_shard.options());
  std::vector<at::Tensor> outs;
  for (const at::Tensor& b : bs)
    outs.push_back(at::empty({world * m0, b.size(1)}, a_shard.options()));
  const auto block = [&](const at::Tensor& t, int r) { return t.narrow(0, r * m0, m0); };
  const auto multiply_own_shard = [&] {  // its products need nothing from the others
    for (std::size_t i = 0; i < bs.size(); ++i) {
      at::Tensor rows = block(outs[i], rank);
      at::mm_out(rows, a2, bs[i]);
    }
  };
  if (world > 1) {
    const at::cuda::CUDAStream compute = at::cuda::getCurrentCUDAStream();
    if (!group.gather_stream) {
      group.gather_stream =
          std::make_unique<c10::cuda::CUDAStream>(c10::cuda::getStreamFromPool(true));
    }
    const c10::cuda::CUDAStream gather = *group.gather_stream;
    // Before any broadcast: the caching allocator must not hand these out again until the gather
    // stream is done with them, also when a broadcast below throws.
    a_full.record_stream(gather);
    a2.record_stream(gather);
    // The gather starts once A_shard is ready, not after this rank's own products.
    at::cuda::CUDAEvent inputs_ready;
    inputs_ready.record(compute);
    inputs_ready.block(gather);
    // One broadcast per shard, in rank order on every rank (NCCL matches calls by order); the
    // products of shard r wait only for broadcast r.
    std::vector<at::cuda::CUDAEvent> arrived(world);
    const ncclDataType_t type = a_shard.scalar_type() == at::kBFloat16 ? ncclBfloat16 : ncclHalf;
    translated(op, [&] {
      for (int r = 0; r < world; ++r) {
        comm.call(fmt::format("broadcast of shard {}", r), [&] {
          return ncclBroadcast(a2.data_ptr(), block(a_full, r).data_ptr(), m0 * k, type, r,
                               comm.get(), gather.stream());
        });
        arrived[r].record(gather);
      }
      return 0;
    });
    multiply_own_shard();
    for (int step = 1; step < world; ++step) {
      const int r = (rank + step) % world;
      arrived[r].block(compute);
      for (std::size_t i = 0; i < bs.size(); ++i) {
        at::Tensor rows = block(outs[i], r);
        at::mm_out(rows, block(a_full, r), bs[i]);
      }
    }
    arrived[world - 1].block(compute);  // the last broadcast: nothing of the gather outlives the op
  } else {
    a_full.copy_(a2);
    multiply_own_shard();
  }
  std::vector<at::Tensor> results;
  for (std::size_t i = 0; i < bs.size(); ++i) {
    results.push_back(
        outs[i].view(with_last(moved.sizes(), world, 1, bs[i].size(1))).movedim(0, dim));
  }
  std::optional<at::Tensor> gathered;
  if (return_a) gathered = a_full.view(with_last(moved.sizes(), world, 1, k)).movedim(0, dim);
  return {gathered, results};
}

std::string describe_plan(const std::string& op_name, int64_t m, int64_t n, int64_t k,
                          at::ScalarType dtype, bool weight_kn, const std::string& group_name) {
  const std::string op = "kiln::describe_plan";
  const LockedGroup locked = group_named(op, group_name);
  return translated(op, [&] {
    const overlap::OverlapOp which = overlap::parse_overlap_op(op_name, "op");
    CachedCollective& c = collective_for(
        *locked, which, checked_int(op, "M", m), checked_int(op, "N", n), checked_int(op, "K", k),
        dtype == at::kBFloat16 ? core::DType::kBf16 : core::DType::kFp16,
        weight_kn ? overlap::WeightLayout::kKN : overlap::WeightLayout::kNK);
    const std::string runs =
        c.chunked
            ? std::string("chunked ReduceScatter: cuBLAS per destination chunk + copy engines")
            : c.collective->describe();
    return fmt::format("{} | {} | padded M {} | B {}{}", runs, c.plan_source, c.padded_m,
                       overlap::weight_layout_name(c.layout),
                       c.contiguous_rows && !c.chunked ? " | contiguous rows" : "");
  });
}

}  // namespace kiln::torch_ops
