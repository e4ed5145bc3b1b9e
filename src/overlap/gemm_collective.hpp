// The overlap runtime: GEMM + ReduceScatter and GEMM + AllReduce that communicate each wave group
// of finished tiles while the rest of the GEMM computes (FlashOverlap's signaling and reordering,
// Hong et al., EuroSys'26; our implementation).
//
// run() enqueues, in order:
//   stream:       the signaling GEMM (CUTLASS main loop untouched; the epilogue stores each tile at
//                 its slot and counts it on its group's counter);
//   comm stream:  for each group g: wait (cuStreamWaitValue32) until counter[g] reaches
//                 epoch x tiles(g), then one plain NCCL call on the group's contiguous slot range;
//   stream:       after the last call, the post-communication reorder to row-major (or RMSNorm).
// Counters only grow: each run raises the targets by one epoch, so nothing is reset between runs.
//
// Outputs. AllReduce: the M×N sum, row-major, on every rank. ReduceScatter: rank j gets
// the rows r with (r % BM) / (BM / world) == j, in increasing order, as an
// owned_rows(j) × N row-major matrix (see slot_layout.hpp); global_row() names each row. With
// OverlapOptions::contiguous_rows, rank j gets rows [j*M/world, (j+1)*M/world) instead (PyTorch's
// layout), for M a multiple of world x BM; the groups are then tile-column ranges.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/stream.hpp"
#include "overlap/copy_engine_exchange.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/group_wait.hpp"
#include "overlap/limited_communicator.hpp"
#include "overlap/plan.hpp"
#include "overlap/reorder_kernels.hpp"
#include "overlap/signaling_gemm.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

// A matrix on the device as the API takes it, so that dtype, shape and alignment are checked.
struct MatrixRef {
  const void* data = nullptr;
  core::DType dtype = core::DType::kBf16;
  int rows = 0, cols = 0;
};
struct MutableMatrixRef {
  void* data = nullptr;
  core::DType dtype = core::DType::kBf16;
  int rows = 0, cols = 0;
};

struct OverlapOptions {
  // Collectives on this communicator (must outlive the operation); nullptr: the operation splits
  // its own, limited to the SMs its CTA cap leaves free (none when the cap is 0: NCCL's default).
  LimitedCommunicator* collective_comm = nullptr;
  bool force_spin_wait = false;  // use the spin kernel even where stream waits work
  // How long a wave group's wait may last: the spin kernel traps after it, and wait() reports
  // and releases the stream waits after it (issue 18, defect 6).
  double wait_timeout_s = kDefaultCounterWaitSeconds;
  bool trace = false;  // record the per-group timeline (a timestamp kernel before the GEMM, events)
  // ReduceScatter only: rank j receives the contiguous rows [j*M/world, (j+1)*M/world) (PyTorch's
  // reduce_scatter_tensor layout) rather than the block-cyclic rows; needs M % (world*BM) == 0
  // (slot_layout.hpp). Give it a plan with raster=m: its groups are tile-column
  // ranges, which a raster along N completes only at the end of the GEMM (correct, no overlap).
  bool contiguous_rows = false;
  // Wraps the signaling GEMM the operation makes (make_signaling_gemm) before it is used: for
  // tests that make a launch fail; empty in normal use.
  std::function<std::unique_ptr<SignalingGemm>(std::unique_ptr<SignalingGemm>)> wrap_gemm;
  // Tests only (issue 18's stress test), both off in use. Poison the slot, receive and exchange
  // buffers at the end of every run, after the reorder read them and before the peers are told
  // they may write again, so that a run that reads a buffer too early reads poison, not the
  // previous run's data. And delay about one tile in four between its stores and its signal.
  bool poison_workspace_after_run = false;
  unsigned debug_signal_delay_ns = 0;
  // comm=ce with 3 or more ranks: each group's copies to its W-1 peers run at once, one stream
  // per peer, instead of one after another on the communication stream (groups stay in order).
  // An experiment: at 4 ranks a group's three copies reached 137-233 GB/s where one copy a group
  // reached 231-376 at 2 ranks (docs/research/async-tp-at-4-ranks.md, item 3); off by default.
  bool copy_stream_per_peer = false;
};

// Per group of the last traced run, in microseconds from the GEMM's start.
struct GroupTimeline {
  int group = 0;
  int waves = 0;
  long long bytes = 0;           // bytes the group's collective sends per rank
  double compute_done_us = 0.0;  // the group's last tile signalled
  double comm_start_us = 0.0;    // the wait returned (the collective may start)
  double comm_done_us = 0.0;     // the collective finished on this rank (comm=ce2: the
                                 // group's sum sent to every peer)
};

// Built in CUTLASS's steps (gemm/device/gemm_universal_adapter.h: can_implement,
// get_workspace_size, initialize, run): can_implement() says why a configuration cannot run,
// workspace_bytes() what it allocates, both on the host before any GPU work; the constructor
// computes the launch, groups and slot geometry, picks the communicator, allocates the workspace
// and detects the wait method; run() launches.
class GemmCollective {
 public:
  // Why `plan` cannot run `op` on `shape` and `dtype` over `world` ranks; "" when it can. With
  // `device_sms` > 0 the plan's groups are also checked against that device's waves.
  static std::string can_implement(OverlapOp op, const GemmShape& shape, core::DType dtype,
                                   const Plan& plan, int world, int device_sms = 0,
                                   bool contiguous_rows = false);
  // Device memory the object allocates on a device of `device_sms` (slot buffer, receive or
  // copy-engine exchange buffer, tables), traces aside. Throws kiln::UsageError where
  // can_implement names a reason.
  static std::size_t workspace_bytes(OverlapOp op, const GemmShape& shape, core::DType dtype,
                                     const Plan& plan, int world, int device_sms,
                                     bool contiguous_rows = false);

  GemmCollective(OverlapOp op, const GemmShape& shape, core::DType dtype, WeightLayout layout,
                 comm::Communicator& comm, const Plan& plan, const OverlapOptions& options = {});
  virtual ~GemmCollective();
  GemmCollective(const GemmCollective&) = delete;
  GemmCollective& operator=(const GemmCollective&) = delete;

  // a: M×K row-major; b: N×K (layout nk) or K×N (kn); out: output_rows() × N row-major.
  // Runs are ordered whatever their streams: each starts after the previous run of this object
  // finished (an event), since they share the slot, receive and exchange buffers and counters.
  // A run whose GEMM launch throws leaves the object usable. Concurrency: two objects that run
  // NCCL collectives at the same time on different communicators can deadlock (NCCL's own rule:
  // order such calls the same way on every rank).
  // An AllReduce plan of the serial form (is_serial_plan: nothing would overlap) runs here as the
  // serial baseline itself: cuBLAS into `out`, then one NCCL AllReduce of `out` in place, on
  // `stream`, with no slot layout and no reorder (a test's wrapped GEMM, a trace, poisoning or a
  // signal delay keep the signaling path). The other run_* calls always take the signaling path.
  void run(const MatrixRef& a, const MatrixRef& b, const MutableMatrixRef& out,
           cudaStream_t stream);
  // Whether run() takes the serial baseline path above: for this object, and for any (host only).
  bool runs_serial_baseline() const { return serial_gemm_ != nullptr; }
  static bool runs_serial_baseline(OverlapOp op, const Plan& plan, const OverlapOptions& options);
  // As run(), with RMSNorm(weight[N], eps) fused into the reorder.
  void run_rmsnorm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& weight, float eps,
                   const MutableMatrixRef& out, cudaStream_t stream);
  // GEMM and collectives only; the result stays slot-ordered (for timing the parts).
  void run_without_reorder(const MatrixRef& a, const MatrixRef& b, cudaStream_t stream);
  // The signaling GEMM alone, no signal and no communication (for the GEMM's own speed).
  void run_gemm_only(const MatrixRef& a, const MatrixRef& b, cudaStream_t stream);
  // Waits on the host until `stream` (where a run was enqueued) is done, for at most
  // options.wait_timeout_s. When the time runs out it throws kiln::Error naming this rank, the
  // run's epoch and each wave group's counter against its target. Before that it raises the
  // counters to their targets, so that the stream waits end and the process can still exit; the
  // run's output is then wrong, and the object refuses further runs (make a new one). A
  // spin-kernel wait has trapped by then: the error names it.
  void wait(cudaStream_t stream);

  OverlapOp op() const { return op_; }
  const GemmShape& shape() const { return shape_; }
  const Plan& plan() const { return plan_; }
  const LaunchGeometry& launch() const { return launch_; }
  const WaveGroups& groups() const { return groups_; }
  const SlotGeometry& geometry() const { return geometry_; }
  WaitMethod wait_method() const { return wait_method_; }
  // ReduceScatter: the rank's subtile; AllReduce: 0 (every rank holds every row).
  int subtile_rank() const { return op_ == OverlapOp::kReduceScatter ? comm_.rank() : 0; }
  // AllReduce: every row (comm=ce2 cuts tiles into subtiles too, but only to reduce them).
  int output_rows() const {
    return op_ == OverlapOp::kAllReduce ? shape_.m : owned_rows(geometry_, subtile_rank());
  }
  int global_row(int local_row) const {
    return op_ == OverlapOp::kAllReduce ? local_row
                                        : overlap::global_row(geometry_, subtile_rank(), local_row);
  }
  // Where each real tile went in the last run (tiles_m x tiles_n, -1 before the first run); with
  // contiguous_rows, where it lies in what its rank receives (fixed at construction).
  std::vector<int> slot_of_tile() const;
  // One line: plan, waves, group sizes and bytes.
  std::string describe() const;
  // HBM bytes the post-communication reorder reads and writes per run: the output once, plus one
  // read of it per part it sums (every rank's with copy engines, the delivered sum with NCCL); 0
  // for the serial form, which has no reorder.
  std::size_t reorder_bytes() const;
  // After a run with options.trace: the timeline of that run (synchronises the streams).
  std::vector<GroupTimeline> timeline();

 private:
  void choose_collective_comm(const OverlapOptions& options);
  void allocate_workspace();
  void check_inputs(const MatrixRef& a, const MatrixRef& b) const;
  void check_output(const MutableMatrixRef& out) const;
  void enqueue_gemm_and_collectives(const MatrixRef& a, const MatrixRef& b, cudaStream_t stream);
  // run() for a serial AllReduce plan (runs_serial_baseline).
  void run_serial_baseline(const MatrixRef& a, const MatrixRef& b, const MutableMatrixRef& out,
                           cudaStream_t stream);
  ReorderSource reorder_source() const;
  // Copy-engine plans: before the reorder, wait for the peers' data; after it, free the buffer.
  void before_reorder(cudaStream_t stream);
  // Enqueues on the communication stream the copies of one group (slots first..first+count).
  void enqueue_exchange(int first, int count, char* group_data);
  // comm=ce2, after enqueue_exchange's first phase of `group`: on the reduce stream, wait for the
  // peers' parts, sum this rank's subtiles of the group (sum_parts) and copy the sum to every
  // peer (the second exchange).
  void enqueue_two_phase_group(int group, int first, int count, char* group_data);
  // comm=ce2, after the last group: free the first-phase regions and join the reduce stream.
  void finish_two_phase(cudaStream_t stream);
  // comm=ce2's arrival flags count groups over runs: the value after `group` of this run.
  unsigned two_phase_count(int group) const;
  void after_reorder(cudaStream_t stream);
  // Names the wave-group counters and copy-engine flags this rank's waits are still behind on,
  // and raises them to their targets; "" when none is behind.
  std::string release_stuck_waits();
  // Throws once release_stuck_waits forced anything (forced_).
  void refuse_if_forced() const;
  // Orders runs across streams (run_done_).
  void wait_for_previous_run(cudaStream_t stream);
  void mark_run_done(cudaStream_t stream);

  OverlapOp op_;
  GemmShape shape_;
  core::DType dtype_;
  comm::Communicator& comm_;
  Plan plan_;
  OverlapOptions options_;
  std::unique_ptr<SignalingGemm> gemm_;
  // The serial form's GEMM (runs_serial_baseline), the heuristic's first cublasLt algorithm:
  // no timing and no synchronisation on the first call, so a captured first run works.
  std::unique_ptr<CublasGemm> serial_gemm_;
  int device_sms_ = 0;
  LaunchGeometry launch_;
  WaveGroups groups_;  // contiguous_rows: tile-column groups (make_column_groups)
  ColumnGroups column_groups_;
  SlotGeometry geometry_;
  WaitMethod wait_method_ = WaitMethod::kStreamMemOp;
  unsigned epoch_ = 0;
  unsigned max_epoch_ = 0;

  std::unique_ptr<LimitedCommunicator> own_collective_comm_;
  std::unique_ptr<CopyEngineExchange> exchange_;  // comm=ce and comm=ce2 plans
  // comm=ce2: the second exchange (every owner's reduced subtiles), this rank's own reduced
  // subtiles, and the stream that reduces and gathers beside the GEMM.
  std::unique_ptr<CopyEngineExchange> gather_;
  core::DeviceBuffer reduced_;
  core::Stream reduce_stream_;
  core::Event reduce_done_{cudaEventDisableTiming};
  unsigned exchange_epoch_ = 0;
  ncclComm_t collective_comm_ = nullptr;
  core::DeviceBuffer slots_;               // GEMM output in slot order (AllReduce: in place)
  core::DeviceBuffer received_;            // ReduceScatter's output on this rank
  core::DeviceBuffer slot_of_tile_;        // int per real tile
  core::DeviceBuffer counters_;            // unsigned per group, plus one word that stays 0
  core::DeviceBuffer tables_;              // wave_group | group_first_slot | group_slot_count
  core::DeviceBuffer trace_;               // slot done ns | gemm start (globaltimer)
  std::vector<core::Event> trace_events_;  // gemm start | per group comm start/done
  core::Stream comm_stream_;
  // OverlapOptions::copy_stream_per_peer: one stream per peer step, a group's start and each
  // peer's end of it (events reused group after group).
  std::vector<core::Stream> peer_streams_;
  core::Event group_ready_{cudaEventDisableTiming};
  std::vector<core::Event> peer_done_;
  core::Event inputs_ready_{cudaEventDisableTiming};
  core::Event comm_done_{cudaEventDisableTiming};
  // The end of the last run on its stream (after its reorder), which the next run waits for.
  core::Event run_done_{cudaEventDisableTiming};
  bool ran_ = false;
  int stall_reporter_ = -1;  // comm_'s id of release_stuck_waits
  bool forced_ = false;      // release_stuck_waits raised a counter or flag
};

// Number of SMs of the current device.
int current_device_sms();

}  // namespace kiln::overlap
