// The overlap runtime (see gemm_collective.hpp).
#include "overlap/gemm_collective.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <thread>

#include "comm/collective.hpp"
#include "comm/nccl_check.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/part_sum.hpp"
#include "overlap/slot_store_map.hpp"
#include "overlap/timeline.hpp"

namespace kiln::overlap {
namespace {

// can_implement's world limit for copy-engine plans is what these hold.
static_assert(PartList::kMaxParts >= ReorderSource::kMaxOwners);
static_assert(ReorderSource::kMaxAddends + 1 >= ReorderSource::kMaxOwners);

// Row subtiles per tile: ReduceScatter gives each rank one, and so does the first phase of a
// two-phase AllReduce (comm=ce2: rank j reduces subtile j of every tile).
int subtiles(OverlapOp op, const Plan& plan, int world) {
  return op == OverlapOp::kReduceScatter || plan.two_phase ? world : 1;
}

// Region s of a rank's copy-engine exchange buffer: what rank s sent, in the layout NCCL would
// have delivered (ReduceScatter and comm=ce2: this rank's subtiles; AllReduce: whole tiles).
// comm=ce2's second exchange (the reduced subtiles coming back) has regions of the same size.
std::int64_t exchange_region_elements(OverlapOp op, const Plan& plan,
                                      const SlotGeometry& geometry) {
  return op == OverlapOp::kReduceScatter || plan.two_phase ? geometry.recv_buffer_elements()
                                                           : geometry.slot_buffer_elements();
}

bool is_power_of_two(int value) {
  return value > 0 && (value & (value - 1)) == 0;
}

void check_matrix(const char* name, const void* data, core::DType dtype, int rows, int cols,
                  core::DType want_dtype, int want_rows, int want_cols) {
  if (data == nullptr) throw UsageError(fmt::format("{}: null pointer", name));
  if (dtype != want_dtype) {
    throw UsageError(fmt::format("{}: dtype {} does not match the operation's {}", name,
                                 core::dtype_name(dtype), core::dtype_name(want_dtype)));
  }
  if (rows != want_rows || cols != want_cols) {
    throw UsageError(
        fmt::format("{}: {}x{} given, {}x{} expected", name, rows, cols, want_rows, want_cols));
  }
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0) {
    throw UsageError(
        fmt::format("{}: pointer {} is not 16-byte aligned (TMA and vector access "
                    "need it)",
                    name, data));
  }
}

}  // namespace

int current_device_sms() {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

GemmCollective::GemmCollective(OverlapOp op, const GemmShape& shape, core::DType dtype,
                               WeightLayout layout, comm::Communicator& comm, const Plan& plan,
                               const OverlapOptions& options)
    : op_(op), shape_(shape), dtype_(dtype), comm_(comm), plan_(plan), options_(options) {
  if (const std::string why =
          can_implement(op, shape, dtype, plan, comm.size(), 0, options.contiguous_rows);
      !why.empty()) {
    throw UsageError(why);
  }
  gemm_ = make_signaling_gemm(dtype, layout, plan.gemm);
  if (options.wrap_gemm) gemm_ = options.wrap_gemm(std::move(gemm_));
  if (runs_serial_baseline(op, plan, options)) serial_gemm_ = std::make_unique<CublasGemm>(1);
  device_sms_ = current_device_sms();
  launch_ = gemm_->geometry(shape, plan.schedule, device_sms_);
  if (options.contiguous_rows) {
    groups_ = make_column_groups(plan.partition, launch_);
    column_groups_ = column_groups_of(groups_, launch_);
  } else {
    groups_ = make_wave_groups(plan.partition, launch_);
  }
  geometry_ = slot_geometry(shape, plan.gemm.tile, launch_, subtiles(op, plan, comm.size()),
                            options.contiguous_rows);
  choose_collective_comm(options);
  allocate_workspace();
  if (options.copy_stream_per_peer && exchange_ && !plan.two_phase && comm.size() >= 3) {
    for (int step = 1; step < comm.size(); ++step) {
      peer_streams_.emplace_back();
      peer_done_.emplace_back(cudaEventDisableTiming);
    }
  }
  const unsigned* always_zero = counters_.as<unsigned>() + groups_.groups();
  wait_method_ = options.force_spin_wait ? WaitMethod::kSpinKernel
                                         : detect_wait_method(comm_stream_, always_zero);
  if (exchange_) exchange_->set_wait_method(wait_method_, options.wait_timeout_s);
  if (gather_) gather_->set_wait_method(wait_method_, options.wait_timeout_s);
  comm_stream_.synchronize();
  // A communicator wait that times out on this object's streams (the benchmarks, the tuner and
  // the suite wait through the communicator) reports and releases its waits too.
  stall_reporter_ = comm_.add_stall_reporter([this] { return release_stuck_waits(); });
}

GemmCollective::~GemmCollective() {
  comm_.remove_stall_reporter(stall_reporter_);
}

bool GemmCollective::runs_serial_baseline(OverlapOp op, const Plan& plan,
                                          const OverlapOptions& options) {
  return op == OverlapOp::kAllReduce && is_serial_plan(plan) && !options.contiguous_rows &&
         !options.wrap_gemm && !options.trace && !options.poison_workspace_after_run &&
         options.debug_signal_delay_ns == 0;
}

std::string GemmCollective::can_implement(OverlapOp op, const GemmShape& shape, core::DType dtype,
                                          const Plan& plan, int world, int device_sms,
                                          bool contiguous_rows) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    return fmt::format("shape {}x{}x{}: M, N and K must be positive", shape.m, shape.n, shape.k);
  }
  if (shape.k % 8 != 0 || shape.n % 8 != 0) {
    return fmt::format(
        "shape {}x{}x{}: K and N must be multiples of 8 (16-byte rows for TMA and the vectorised "
        "reorder)",
        shape.m, shape.n, shape.k);
  }
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    return "the signaling GEMM takes bf16 or fp16 inputs, not " + core::dtype_name(dtype);
  }
  try {
    validate_plan(plan, "plan");
  } catch (const UsageError& e) {
    return e.what();
  }
  // The copy-engine reductions hold one pointer per rank (ReorderSource, PartList).
  if (plan.copy_engine && world > ReorderSource::kMaxOwners) {
    return fmt::format("comm={} takes at most {} ranks (world size {})", transport_name(plan),
                       ReorderSource::kMaxOwners, world);
  }
  if (plan.two_phase && op != OverlapOp::kAllReduce) {
    return "comm=ce2 is a two-phase AllReduce; a ReduceScatter by copy engine is comm=ce";
  }
  if (contiguous_rows) {
    if (op != OverlapOp::kReduceScatter) return "contiguous row blocks are a ReduceScatter layout";
    try {
      (void)slot_geometry(shape, plan.gemm.tile, LaunchGeometry{}, world, true);
    } catch (const UsageError& e) {
      return e.what();
    }
  }
  // The epilogue stores 16-row boxes, so a subtile has at least 16 rows (slot_store_map.hpp).
  if ((op == OverlapOp::kReduceScatter || plan.two_phase) && !contiguous_rows &&
      (!is_power_of_two(world) || plan.gemm.tile.m % (world * kStoreBoxRows) != 0)) {
    return fmt::format(
        "{} splits each {}-row tile into one row subtile per rank, of at least {} "
        "rows: the world size ({}) must be a power of two dividing {}",
        plan.two_phase ? "comm=ce2" : "ReduceScatter", plan.gemm.tile.m, kStoreBoxRows, world,
        plan.gemm.tile.m / kStoreBoxRows);
  }
  if (device_sms > 0) {
    try {
      (void)make_wave_groups(plan.partition,
                             host_launch_geometry(shape, plan.gemm, plan.schedule, device_sms));
    } catch (const UsageError& e) {
      return e.what();
    }
  }
  return "";
}

std::size_t GemmCollective::workspace_bytes(OverlapOp op, const GemmShape& shape, core::DType dtype,
                                            const Plan& plan, int world, int device_sms,
                                            bool contiguous_rows) {
  if (const std::string why =
          can_implement(op, shape, dtype, plan, world, device_sms, contiguous_rows);
      !why.empty()) {
    throw UsageError(why);
  }
  const LaunchGeometry launch = host_launch_geometry(shape, plan.gemm, plan.schedule, device_sms);
  const WaveGroups groups = contiguous_rows ? make_column_groups(plan.partition, launch)
                                            : make_wave_groups(plan.partition, launch);
  const SlotGeometry geometry =
      slot_geometry(shape, plan.gemm.tile, launch, subtiles(op, plan, world), contiguous_rows);
  const std::size_t element = core::dtype_size(dtype);
  std::size_t bytes = geometry.slot_buffer_elements() * element;
  if (plan.copy_engine) {
    bytes += exchange_region_elements(op, plan, geometry) * element * world +
             CopyEngineExchange::flag_bytes(world);
  }
  if (plan.two_phase) {
    // The gathered reduced subtiles (a second exchange) and this rank's own reduced ones.
    bytes += geometry.recv_buffer_elements() * element * (world + 1) +
             CopyEngineExchange::flag_bytes(world);
  }
  if (!plan.copy_engine && op == OverlapOp::kReduceScatter) {
    bytes += geometry.recv_buffer_elements() * element;
  }
  bytes += sizeof(int) * launch.tiles_m * launch.tiles_n;  // slot of each tile
  bytes += sizeof(unsigned) * (groups.groups() + 1);       // counters
  bytes += sizeof(int) * groups.concatenated().size();     // wave-group tables
  if (op == OverlapOp::kAllReduce && is_serial_plan(plan)) {
    bytes += CublasGemm::kWorkspaceBytes;  // the serial form's cuBLAS (run_serial_baseline)
  }
  return bytes;
}

void GemmCollective::choose_collective_comm(const OverlapOptions& options) {
  if (plan_.copy_engine) {
    collective_comm_ = comm_.get();  // only for the exchange's setup; no collective runs on it
  } else if (options.collective_comm != nullptr) {
    collective_comm_ = options.collective_comm->get();
  } else if (const int ctas = collective_ctas_for(plan_, launch_, device_sms_); ctas >= 1) {
    own_collective_comm_ = std::make_unique<LimitedCommunicator>(comm_, ctas);
    collective_comm_ = own_collective_comm_->get();
  } else {
    collective_comm_ = comm_.get();
  }
}

void GemmCollective::allocate_workspace() {
  const std::size_t element = core::dtype_size(dtype_);
  slots_ = core::DeviceBuffer(geometry_.slot_buffer_elements() * element);
  if (plan_.copy_engine) {
    exchange_ = std::make_unique<CopyEngineExchange>(
        comm_, exchange_region_elements(op_, plan_, geometry_) * element);
  }
  if (plan_.two_phase) {
    gather_ = std::make_unique<CopyEngineExchange>(
        comm_, exchange_region_elements(op_, plan_, geometry_) * element, 2000);
    reduced_ = core::DeviceBuffer(geometry_.recv_buffer_elements() * element);
  }
  if (!plan_.copy_engine && op_ == OverlapOp::kReduceScatter) {
    received_ = core::DeviceBuffer(geometry_.recv_buffer_elements() * element);
  }
  slot_of_tile_ = core::DeviceBuffer(sizeof(int) * launch_.tiles_m * launch_.tiles_n);
  counters_ = core::DeviceBuffer(sizeof(unsigned) * (groups_.groups() + 1));
  KILN_CUDA_CHECK(cudaMemset(counters_.data(), 0, counters_.bytes()));
  KILN_CUDA_CHECK(cudaMemset(slot_of_tile_.data(), 0xFF, slot_of_tile_.bytes()));
  if (geometry_.contiguous_rows) {
    // Fixed by the tile's coordinates (slot_layout.hpp): where each tile lies in what its rank
    // receives, which is all the reorder needs.
    std::vector<int> received(static_cast<std::size_t>(launch_.tiles_m) * launch_.tiles_n);
    for (int tm = 0; tm < launch_.tiles_m; ++tm) {
      for (int tn = 0; tn < launch_.tiles_n; ++tn) {
        received[static_cast<std::size_t>(tm) * launch_.tiles_n + tn] =
            contiguous_received_tile(geometry_, tm, tn);
      }
    }
    KILN_CUDA_CHECK(cudaMemcpy(slot_of_tile_.data(), received.data(), slot_of_tile_.bytes(),
                               cudaMemcpyHostToDevice));
  }
  const std::vector<int> tables = groups_.concatenated();
  tables_ = core::DeviceBuffer(sizeof(int) * tables.size());
  KILN_CUDA_CHECK(
      cudaMemcpy(tables_.data(), tables.data(), tables_.bytes(), cudaMemcpyHostToDevice));
  // A pageable cudaMemcpy may return before its DMA lands; the kernels that read the tables run on
  // non-blocking streams, which do not wait for it.
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  if (options_.trace) {
    for (int e = 0; e < 1 + 2 * groups_.groups(); ++e) trace_events_.emplace_back();
    trace_ =
        core::DeviceBuffer(sizeof(unsigned long long) * (launch_.slots + 1 + 2 * groups_.groups()));
  }
  // Counters are 32-bit and compared wrap-safely; restart them well before a target could pass
  // 2^31 ahead of a stale value.
  const int largest_group =
      *std::max_element(groups_.group_slot_count.begin(), groups_.group_slot_count.end());
  max_epoch_ =
      static_cast<unsigned>((1u << 30) / static_cast<unsigned>(std::max(largest_group, 1)));
}

std::string GemmCollective::describe() const {
  std::vector<std::string> group_bytes;
  const std::size_t element = core::dtype_size(dtype_);
  for (int g = 0; g < groups_.groups(); ++g) {
    group_bytes.push_back(fmt::format(
        "{:.1f}", static_cast<double>(groups_.group_slot_count[g]) *
                      static_cast<double>(geometry_.tile_elements() * element) / (1 << 20)));
  }
  return fmt::format(
      "{} | {} tiles ({}x{} real) on {} CTAs = {} waves, {} groups of MiB {} | {} | {}",
      to_string(plan_), launch_.slots, launch_.tiles_m, launch_.tiles_n, launch_.grid_ctas,
      launch_.waves(), groups_.groups(), fmt::join(group_bytes, "/"),
      wait_method_name(wait_method_),
      serial_gemm_ ? std::string("serial form: run() is cuBLAS, then one NCCL AllReduce in place")
      : gather_    ? std::string("copy engines in two phases: each rank's part to its owner, "
                                    "reduced there per group beside the GEMM, gathered back")
      : exchange_  ? std::string(peer_streams_.empty()
                                     ? "copy engines, reduced in the reorder"
                                     : "copy engines, a stream per peer, reduced in the reorder")
      : collective_comm_ == comm_.get()
          ? std::string("NCCL CTAs unlimited")
          : fmt::format("NCCL limited to the {} free SMs", device_sms_ - launch_.grid_ctas));
}

std::size_t GemmCollective::reorder_bytes() const {
  if (serial_gemm_) return 0;
  const std::size_t output =
      static_cast<std::size_t>(output_rows()) * shape_.n * core::dtype_size(dtype_);
  // comm=ce2: the reorder copies the gathered sums (the owners reduced them beside the GEMM).
  const std::size_t parts =
      exchange_ && !gather_ ? static_cast<std::size_t>(exchange_->world()) : 1;
  return output * (parts + 1);
}

void GemmCollective::check_inputs(const MatrixRef& a, const MatrixRef& b) const {
  check_matrix("a", a.data, a.dtype, a.rows, a.cols, dtype_, shape_.m, shape_.k);
  if (gemm_->weight_layout() == WeightLayout::kNK) {
    check_matrix("b (N×K)", b.data, b.dtype, b.rows, b.cols, dtype_, shape_.n, shape_.k);
  } else {
    check_matrix("b (K×N)", b.data, b.dtype, b.rows, b.cols, dtype_, shape_.k, shape_.n);
  }
}

void GemmCollective::check_output(const MutableMatrixRef& out) const {
  check_matrix("out", out.data, out.dtype, out.rows, out.cols, dtype_, output_rows(), shape_.n);
}

ReorderSource GemmCollective::reorder_source() const {
  ReorderSource source;
  if (gather_) {
    // comm=ce2: each row from its owner's reduced subtiles (this rank's own in reduced_).
    source.owners = gather_->world();
    for (int r = 0; r < gather_->world(); ++r) {
      source.owner_regions[r] = r == gather_->rank() ? reduced_.data() : gather_->local_region(r);
    }
    source.slot_of_tile = slot_of_tile_.as<int>();
    source.geometry = geometry_;
    return source;
  }
  source.source = op_ == OverlapOp::kReduceScatter ? received_.data() : slots_.data();
  if (exchange_) {
    // The peers' contributions sit in their regions of the exchange buffer; this rank's own is
    // read where the GEMM left it (AllReduce: the slot buffer is already in received layout;
    // ReduceScatter: its subtiles, located through the group tables).
    // AllReduce: every rank sums the parts in rank order (its own, from the slot buffer, in its
    // place), so that all ranks round alike and hold identical bits, as tensor-parallel replicas
    // must. ReduceScatter: each rank's rows are its own; its part is added last.
    const bool rs = op_ == OverlapOp::kReduceScatter;
    source.source = nullptr;
    for (int r = 0; r < exchange_->world(); ++r) {
      const void* part = r != exchange_->rank() ? exchange_->local_region(r)
                         : rs                   ? nullptr
                                                : slots_.data();
      if (part == nullptr) continue;
      if (source.source == nullptr)
        source.source = part;
      else
        source.addends[source.addend_count++] = part;
    }
    if (rs) {
      source.own_slots = slots_.data();
      source.wave_group = tables_.as<int>();
      source.group_first_slot = source.wave_group + groups_.wave_group.size();
      source.group_slot_count = source.group_first_slot + groups_.groups();
      source.grid_ctas = launch_.grid_ctas;
    }
  }
  source.slot_of_tile = slot_of_tile_.as<int>();
  // Contiguous row blocks: the reorder counts tile rows from this rank's first one.
  if (geometry_.contiguous_rows) {
    source.slot_of_tile +=
        static_cast<std::ptrdiff_t>(comm_.rank()) * geometry_.tiles_per_rank * geometry_.tiles_n;
  }
  source.geometry = geometry_;
  source.rank = op_ == OverlapOp::kReduceScatter ? comm_.rank() : 0;
  return source;
}

void GemmCollective::refuse_if_forced() const {
  if (forced_) {
    throw Error(fmt::format(
        "rank {}: this overlap operation's waits were forced open after a timeout (epoch {}); "
        "its counters and flags no longer count its runs: make a new operation",
        comm_.rank(), epoch_));
  }
}

void GemmCollective::enqueue_gemm_and_collectives(const MatrixRef& a, const MatrixRef& b,
                                                  cudaStream_t stream) {
  refuse_if_forced();
  check_inputs(a, b);
  wait_for_previous_run(stream);
  // This run's epochs, committed only once its GEMM is launched: a launch that throws leaves the
  // counters where they were, and a later run must not wait for signals that never come (nor the
  // peers for an exchange epoch this rank skipped).
  unsigned epoch = epoch_ + 1;
  if (epoch > max_epoch_) {
    // Everything that waited on the old targets finished before `stream` got here (run() makes
    // `stream` wait for the communication stream), so the reset cannot strand a waiter.
    KILN_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream));
    epoch = 1;
  }
  // The communication stream starts after everything before this call on `stream` (the inputs,
  // and the previous run's reorder, which read the buffers this run overwrites).
  inputs_ready_.record(stream);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, inputs_ready_.get(), 0));

  const int groups = groups_.groups();
  auto* trace = trace_.as<unsigned long long>();
  if (options_.trace) {
    enqueue_timestamp(trace + launch_.slots, stream);
    trace_events_[0].record(stream);
  }

  EpilogueTargets targets;
  targets.slots = slots_.data();
  targets.slot_of_tile = slot_of_tile_.as<int>();
  targets.group_counters = counters_.as<unsigned>();
  targets.wave_group = tables_.as<int>();
  targets.group_first_slot = tables_.as<int>() + groups_.wave_group.size();
  targets.group_slot_count = targets.group_first_slot + groups;
  targets.slot_done_ns = options_.trace ? trace : nullptr;
  targets.geometry = geometry_;
  targets.column_groups = column_groups_;
  targets.deferred_signal = plan_.deferred_signal;
  targets.debug_signal_delay_ns = options_.debug_signal_delay_ns;
  const ScheduleOptions schedule = plan_.schedule;
  gemm_->run(shape_, a.data, b.data, targets, schedule, device_sms_, stream);
  epoch_ = epoch;
  if (exchange_) ++exchange_epoch_;

  const std::size_t element = core::dtype_size(dtype_);
  char* slot_bytes = static_cast<char*>(slots_.data());
  char* received_bytes = static_cast<char*>(received_.data());
  for (int g = 0; g < groups; ++g) {
    const int first = groups_.group_first_slot[g];
    const int count = groups_.group_slot_count[g];
    enqueue_counter_wait(wait_method_, counters_.as<unsigned>() + g,
                         epoch_ * static_cast<unsigned>(count), comm_stream_,
                         options_.wait_timeout_s, g);
    // Events, not timestamp kernels, on the communication stream: a kernel there could not start
    // beside a GEMM that holds every SM (cap 0), an event needs no SM.
    if (options_.trace) trace_events_[1 + 2 * g].record(comm_stream_);
    void* send = slot_bytes + first * geometry_.tile_elements() * element;
    if (gather_) {
      // The owner's reduction needs this rank's own part (signalled now) and the peers' (their
      // flags), not this rank's outgoing copies: the reduce stream starts from here.
      group_ready_.record(comm_stream_);
      enqueue_exchange(first, count, static_cast<char*>(send));
      enqueue_two_phase_group(g, first, count, static_cast<char*>(send));
    } else if (exchange_) {
      enqueue_exchange(first, count, static_cast<char*>(send));
    } else if (op_ == OverlapOp::kAllReduce) {
      const std::size_t elements = static_cast<std::size_t>(count) * geometry_.tile_elements();
      comm_.call("overlap allreduce", [&] {
        return ncclAllReduce(send, send, elements, comm::nccl_type(dtype_), ncclSum,
                             collective_comm_, comm_stream_);
      });
    } else {
      void* recv = received_bytes + geometry_.recv_elements(first) * element;
      const auto elements = static_cast<std::size_t>(geometry_.recv_elements(count));
      comm_.call("overlap reducescatter", [&] {
        return ncclReduceScatter(send, recv, elements, comm::nccl_type(dtype_), ncclSum,
                                 collective_comm_, comm_stream_);
      });
    }
    // comm=ce2: a group's communication ends when its sum has gone out (the reduce stream).
    if (options_.trace) trace_events_[2 + 2 * g].record(gather_ ? reduce_stream_ : comm_stream_);
  }
  if (gather_) {
    finish_two_phase(stream);
  } else if (exchange_) {
    exchange_->announce_arrival(exchange_epoch_, comm_stream_);
  }
  comm_done_.record(comm_stream_);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, comm_done_.get(), 0));
}

unsigned GemmCollective::two_phase_count(int group) const {
  // Monotone over runs and groups; the stream waits compare wrap-safely (group_wait.hpp).
  return (exchange_epoch_ - 1) * static_cast<unsigned>(groups_.groups()) +
         static_cast<unsigned>(group) + 1;
}

void GemmCollective::enqueue_two_phase_group(int group, int first, int count, char* group_data) {
  const std::size_t element = core::dtype_size(dtype_);
  const int me = gather_->rank(), world = gather_->world();
  // Phase 1 is on the communication stream (enqueue_exchange): the group's part for each peer is
  // in that peer's region `me`. Tell the owners, then reduce and gather on the reduce stream, so
  // that the next group's copies need not wait for this group's peers.
  exchange_->announce_arrival(two_phase_count(group), comm_stream_);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(reduce_stream_, group_ready_.get(), 0));
  if (group == 0) gather_->wait_until_peers_freed(exchange_epoch_, reduce_stream_);
  exchange_->wait_for_arrivals(two_phase_count(group), reduce_stream_);
  const std::int64_t offset = geometry_.recv_elements(first);
  const std::int64_t elements = geometry_.recv_elements(count);
  const std::size_t bytes = static_cast<std::size_t>(elements) * element;
  // Rank order, this rank's own part (in the slot buffer) at its place: comm=ce's order.
  PartList parts;
  parts.count = world;
  for (int r = 0; r < world; ++r) {
    parts.parts[r] = r == me ? static_cast<const void*>(group_data + me * bytes)
                             : static_cast<const char*>(exchange_->local_region(r)) +
                                   offset * static_cast<std::int64_t>(element);
  }
  char* reduced = static_cast<char*>(reduced_.data()) + offset * element;
  sum_parts(parts, elements, dtype_, reduced, device_sms_, reduce_stream_);
  for (int step = 1; step < world; ++step) {
    gather_->copy_to((me + step) % world, static_cast<std::size_t>(offset) * element, reduced,
                     bytes, reduce_stream_);
  }
  gather_->announce_arrival(two_phase_count(group), reduce_stream_);
}

void GemmCollective::finish_two_phase(cudaStream_t stream) {
  // Every peer part in this rank's first-phase regions has been summed: the peers may write the
  // next run's. (Poisoned first when the tests ask: a peer that wrote early would show.)
  if (options_.poison_workspace_after_run) {
    for (int r = 0; r < exchange_->world(); ++r) {
      if (r != exchange_->rank())
        core::poison(exchange_->local_region(r), exchange_->region_bytes(), reduce_stream_);
    }
  }
  exchange_->announce_freed(exchange_epoch_, reduce_stream_);
  reduce_done_.record(reduce_stream_);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, reduce_done_.get(), 0));
}

void GemmCollective::enqueue_exchange(int first, int count, char* group_data) {
  const std::size_t element = core::dtype_size(dtype_);
  const int me = exchange_->rank(), world = exchange_->world();
  if (first == 0) exchange_->wait_until_peers_freed(exchange_epoch_, comm_stream_);
  const bool per_peer = !peer_streams_.empty();
  if (per_peer) group_ready_.record(comm_stream_);
  // Only the peers' parts travel; the reorder reads this rank's own from the slot buffer.
  for (int step = 1; step < world; ++step) {
    const int r = (me + step) % world;
    cudaStream_t copy_stream = comm_stream_;
    if (per_peer) {
      copy_stream = peer_streams_[step - 1].get();
      KILN_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, group_ready_.get(), 0));
    }
    if (op_ == OverlapOp::kReduceScatter || plan_.two_phase) {
      // Rank r's part of the group (its subtiles, or with contiguous rows its whole tiles):
      // contiguous in the slot buffer, at the group's offset in the layout a ReduceScatter
      // delivers.
      const std::size_t bytes = static_cast<std::size_t>(geometry_.recv_elements(count)) * element;
      exchange_->copy_to(r, static_cast<std::size_t>(geometry_.recv_elements(first)) * element,
                         group_data + r * bytes, bytes, copy_stream);
    } else {
      const std::size_t bytes =
          static_cast<std::size_t>(count) * geometry_.tile_elements() * element;
      exchange_->copy_to(r, first * geometry_.tile_elements() * element, group_data, bytes,
                         copy_stream);
    }
    if (per_peer) {
      // The group ends on the communication stream when every peer's copy has: its trace event,
      // the next group and the arrival flags (set after the data, in stream order) follow it.
      peer_done_[step - 1].record(copy_stream);
      KILN_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, peer_done_[step - 1].get(), 0));
    }
  }
}

void GemmCollective::before_reorder(cudaStream_t stream) {
  if (gather_) {
    gather_->wait_for_arrivals(two_phase_count(groups_.groups() - 1), stream);
  } else if (exchange_) {
    exchange_->wait_for_arrivals(exchange_epoch_, stream);
  }
}

void GemmCollective::after_reorder(cudaStream_t stream) {
  if (options_.poison_workspace_after_run) {
    core::poison(slots_.data(), slots_.bytes(), stream);
    if (received_.bytes() > 0) core::poison(received_.data(), received_.bytes(), stream);
    // comm=ce2 poisons its first-phase regions on the reduce stream (finish_two_phase): they
    // are freed there, before this point.
    CopyEngineExchange* read_here = gather_ ? gather_.get() : exchange_.get();
    if (read_here) {
      for (int r = 0; r < read_here->world(); ++r) {
        if (r != read_here->rank())
          core::poison(read_here->local_region(r), read_here->region_bytes(), stream);
      }
    }
    if (reduced_.bytes() > 0) core::poison(reduced_.data(), reduced_.bytes(), stream);
  }
  if (gather_) {
    gather_->announce_freed(exchange_epoch_, stream);
  } else if (exchange_) {
    exchange_->announce_freed(exchange_epoch_, stream);
  }
  mark_run_done(stream);
}

void GemmCollective::wait_for_previous_run(cudaStream_t stream) {
  if (ran_) KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, run_done_.get(), 0));
}

void GemmCollective::mark_run_done(cudaStream_t stream) {
  run_done_.record(stream);
  ran_ = true;
}

void GemmCollective::run(const MatrixRef& a, const MatrixRef& b, const MutableMatrixRef& out,
                         cudaStream_t stream) {
  check_output(out);
  if (serial_gemm_) {
    run_serial_baseline(a, b, out, stream);
    return;
  }
  enqueue_gemm_and_collectives(a, b, stream);
  before_reorder(stream);
  restore_row_major(reorder_source(), dtype_, output_rows(), shape_.n, out.data, stream);
  after_reorder(stream);
}

// Nothing overlaps in the serial form, and its signaling version adds the slot layout's reorder
// (a read and a write of the output) and runs CUTLASS's kernel where cuBLAS may be faster: on
// 4xH200 at 4096x8192x2048 it ran 566 us against cuBLAS + NCCL's 508 (528 without the reorder;
// docs/results/2026-11-27-h200-x4-b/call2/auto-ar-g4.txt). Run as the baseline, it is the
// baseline, and NCCL adds each element at the position the serial reference gives it (same ring
// order, so the same roundings wherever the two cuBLAS products agree).
void GemmCollective::run_serial_baseline(const MatrixRef& a, const MatrixRef& b,
                                         const MutableMatrixRef& out, cudaStream_t stream) {
  refuse_if_forced();
  check_inputs(a, b);
  wait_for_previous_run(stream);
  serial_gemm_->run(shape_.m, shape_.n, shape_.k, dtype_, gemm_->weight_layout(), a.data, b.data,
                    out.data, stream);
  const std::size_t elements = static_cast<std::size_t>(shape_.m) * shape_.n;
  comm_.call("overlap allreduce (serial form)", [&] {
    return ncclAllReduce(out.data, out.data, elements, comm::nccl_type(dtype_), ncclSum,
                         collective_comm_, stream);
  });
  mark_run_done(stream);
}

void GemmCollective::run_rmsnorm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& weight,
                                 float eps, const MutableMatrixRef& out, cudaStream_t stream) {
  check_output(out);
  check_matrix("weight", weight.data, weight.dtype, weight.rows, weight.cols, dtype_, 1, shape_.n);
  if (!(eps > 0.0f)) throw UsageError(fmt::format("eps = {}: must be > 0", eps));
  enqueue_gemm_and_collectives(a, b, stream);
  before_reorder(stream);
  rmsnorm_rows(reorder_source(), dtype_, output_rows(), shape_.n, weight.data, eps, out.data,
               stream);
  after_reorder(stream);
}

void GemmCollective::run_without_reorder(const MatrixRef& a, const MatrixRef& b,
                                         cudaStream_t stream) {
  enqueue_gemm_and_collectives(a, b, stream);
  before_reorder(stream);
  after_reorder(stream);
}

void GemmCollective::run_gemm_only(const MatrixRef& a, const MatrixRef& b, cudaStream_t stream) {
  refuse_if_forced();
  check_inputs(a, b);
  wait_for_previous_run(stream);
  EpilogueTargets targets;
  targets.slots = slots_.data();
  targets.slot_of_tile = slot_of_tile_.as<int>();
  targets.wave_group = tables_.as<int>();
  targets.group_first_slot = tables_.as<int>() + groups_.wave_group.size();
  targets.group_slot_count = targets.group_first_slot + groups_.groups();
  targets.geometry = geometry_;
  targets.column_groups = column_groups_;
  const ScheduleOptions schedule = plan_.schedule;
  gemm_->run(shape_, a.data, b.data, targets, schedule, device_sms_, stream);
  mark_run_done(stream);
}

void GemmCollective::wait(cudaStream_t stream) {
  const auto gpu_failure = [&](cudaError_t error) {
    (void)cudaGetLastError();
    return Error(
        fmt::format("rank {}: overlap run (epoch {}) failed on the GPU: {} (a spin-kernel wait "
                    "traps after {} s; see the kernel's message above: counter wait <g> is wave "
                    "group g, 1000 + r a copy-engine 'freed' flag of rank r, 2000 + r its "
                    "'arrived' flag, 3000 + r and 4000 + r the same of comm=ce2's second phase)",
                    comm_.rank(), epoch_, cudaGetErrorString(error), options_.wait_timeout_s));
  };
  // A second of grace past the timeout, so that a spin kernel that traps at the timeout is
  // reported as such.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(options_.wait_timeout_s + 1.0);
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) throw gpu_failure(state);
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const std::string report = release_stuck_waits();
  throw Error(fmt::format("rank {}: overlap run (epoch {}) did not finish within {} s; {}",
                          comm_.rank(), epoch_, options_.wait_timeout_s,
                          report.empty() ? "every wave group was signalled and no copy-engine "
                                           "flag is behind (the collective is stuck)"
                                         : report));
}

std::string GemmCollective::release_stuck_waits() {
  if (!ran_ && epoch_ == 0) return "";
  // The counters behind their targets are raised so that the stream waits end.
  const int groups = groups_.groups();
  std::vector<unsigned> targets(groups);
  for (int g = 0; g < groups; ++g)
    targets[g] = epoch_ * static_cast<unsigned>(groups_.group_slot_count[g]);
  const std::vector<unsigned> counters = raise_words_behind(counters_.as<unsigned>(), targets);
  std::string report;
  for (int g = 0; g < groups; ++g) {
    if (static_cast<int>(counters[g] - targets[g]) >= 0) continue;
    report += fmt::format("{}group {}: counter {} of target {}", report.empty() ? "" : "; ", g,
                          counters[g], targets[g]);
  }
  // comm=ce2's arrivals count groups (two_phase_count); the others count runs. A ce2 peer that is
  // slow, not gone, may still write an earlier group's count after this raise and lower a flag
  // again; the run is failed either way, and the object refuses further runs (forced_).
  const unsigned arrivals = gather_ ? two_phase_count(groups - 1) : exchange_epoch_;
  for (CopyEngineExchange* exchange : {exchange_.get(), gather_.get()}) {
    if (exchange == nullptr) continue;
    const std::string flags = exchange->release_stuck_flags(exchange_epoch_, arrivals);
    if (!flags.empty()) {
      report += (report.empty() ? "" : "; ") +
                (exchange == gather_.get() ? "second phase: " : std::string()) + flags;
    }
  }
  if (report.empty()) return report;
  // The forced values no longer count this object's runs (and a late signal or peer write may
  // still land): later runs would be released early. The object refuses them.
  forced_ = true;
  return fmt::format("overlap on rank {} (epoch {}, {}): {}; raised to release the waits",
                     comm_.rank(), epoch_, wait_method_name(wait_method_), report);
}

std::vector<int> GemmCollective::slot_of_tile() const {
  std::vector<int> map(static_cast<std::size_t>(launch_.tiles_m) * launch_.tiles_n);
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  KILN_CUDA_CHECK(cudaMemcpy(map.data(), slot_of_tile_.data(), map.size() * sizeof(int),
                             cudaMemcpyDeviceToHost));
  return map;
}

std::vector<GroupTimeline> GemmCollective::timeline() {
  if (!options_.trace) throw UsageError("timeline(): construct with OverlapOptions::trace");
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> ns(trace_.bytes() / sizeof(unsigned long long));
  KILN_CUDA_CHECK(cudaMemcpy(ns.data(), trace_.data(), trace_.bytes(), cudaMemcpyDeviceToHost));
  const double start = static_cast<double>(ns[launch_.slots]);
  const auto us = [&](unsigned long long t) { return (static_cast<double>(t) - start) / 1000.0; };
  std::vector<GroupTimeline> timeline;
  const std::size_t element = core::dtype_size(dtype_);
  for (int g = 0; g < groups_.groups(); ++g) {
    GroupTimeline row;
    row.group = g;
    row.waves =
        static_cast<int>(std::count(groups_.wave_group.begin(), groups_.wave_group.end(), g));
    row.bytes = static_cast<long long>(groups_.group_slot_count[g]) * geometry_.tile_elements() *
                static_cast<long long>(element);
    unsigned long long done = 0;
    for (int s = groups_.group_first_slot[g];
         s < groups_.group_first_slot[g] + groups_.group_slot_count[g]; ++s) {
      done = std::max(done, ns[s]);
    }
    row.compute_done_us = us(done);
    // Event times count from the event recorded right after the start timestamp.
    row.comm_start_us = 1000.0 * trace_events_[1 + 2 * g].elapsed_ms_since(trace_events_[0]);
    row.comm_done_us = 1000.0 * trace_events_[2 + 2 * g].elapsed_ms_since(trace_events_[0]);
    timeline.push_back(row);
  }
  return timeline;
}

}  // namespace kiln::overlap
