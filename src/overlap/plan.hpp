// An overlap plan: which tile, how many CTAs the GEMM may use, the scheduler's order, and how the
// GEMM's waves are grouped for communication. Printable and parseable in one format:
//   "tile=128x256 cap=128 raster=n swizzle=8 signal=eager comm=nccl groups=1,2,2,3"
// so a plan printed by a bench run can be passed back with --plan. The kernel's cluster and
// schedule ("cluster=1x2 kernel=pingpong") are printed only when they differ from the default
// 2x1 cooperative kernel, so plans and tuner profiles written before they existed still match;
// likewise "scheduler=claimed" (ping-pong tiles claimed at run time) only when it is set.
#pragma once

#include <string>
#include <vector>

#include "overlap/gemm_shape.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

struct Plan {
  // Which compiled kernel (tile, cluster, schedule); one of built_gemm_configs().
  GemmConfig gemm;
  // The GEMM scheduler's knobs. cta_cap: CTAs the GEMM may use, 0 = every SM (leaves NCCL none
  // spare), even (2-CTA clusters); a cap that divides the tile count keeps the last wave full.
  // swizzle 8 was the fastest GEMM order on 5 of the 6 issue shapes on H200
  // (docs/results/2026-11-23-overlap/, gemm.json), up to 19% faster than 1.
  ScheduleOptions schedule{0, true, 8};
  bool deferred_signal = false;  // signal=deferred: count a tile at the CTA's next epilogue
  // comm=nccl: one NCCL collective per group (on SMs the cap leaves free); comm=ce: the group's
  // data goes to every rank by copy engine and the reorder adds it up (copy_engine_exchange.hpp).
  bool copy_engine = false;
  // comm=ce2 (AllReduce, with copy_engine): two phases per group, both on copy engines. Each
  // rank's 1/W of the group goes to the rank that owns it, the owner sums the W parts on the SMs
  // the cap leaves free while the GEMM runs, and copies the sum back to every rank: 2(W-1)/W of
  // the output each way instead of comm=ce's W-1 (docs/research/allreduce-overlap-at-4-ranks.md).
  bool two_phase = false;
  std::vector<int> partition;  // waves per group, in order; empty: one group per wave
};

std::string to_string(const Plan& plan);
// The plan's comm= value: nccl, ce or ce2.
std::string transport_name(const Plan& plan);
// " scheduler=claimed" or " scheduler=serpentine" for claimed tiles; empty for the default static.
std::string scheduler_words(const ScheduleOptions& schedule);
// Throws kiln::UsageError naming `argument`, the bad field and what is accepted.
Plan parse_plan(const std::string& text, const std::string& argument);
// "1,2,2,3" -> {1,2,2,3}; every entry >= 1.
std::vector<int> parse_partition(const std::string& text, const std::string& argument);
std::string partition_string(const std::vector<int>& partition);

// The wave groups of a launch: for each wave its group, for each group its slot range. These are
// the tables the signaling epilogue reads (uploaded to the device by the runtime).
struct WaveGroups {
  std::vector<int> wave_group;        // [waves]
  std::vector<int> group_first_slot;  // [groups]
  std::vector<int> group_slot_count;  // [groups]
  int groups() const { return static_cast<int>(group_first_slot.size()); }
  // The three tables back to back (wave_group | group_first_slot | group_slot_count): the layout
  // the runtime uploads and the epilogue's pointers index.
  std::vector<int> concatenated() const;
};

// Throws kiln::UsageError when the partition does not sum to the wave count (saying both).
// An empty partition means one group per wave.
WaveGroups make_wave_groups(const std::vector<int>& partition, const LaunchGeometry& launch);

// Where a launch's output lives (slot_layout.hpp): `subtiles` = world size for ReduceScatter,
// 1 for AllReduce; it must divide the tile's rows (GemmCollective::can_implement also asks for a
// power-of-two world and subtiles of whole 16-row store boxes). With `contiguous_rows`
// (ReduceScatter to contiguous row blocks) the tile height must be a power of two and M a multiple
// of subtiles x tile height; every slot is then a real tile. Throws kiln::UsageError saying which.
SlotGeometry slot_geometry(const GemmShape& shape, TileShape tile, const LaunchGeometry& launch,
                           int subtiles, bool contiguous_rows = false);

// contiguous_rows: the plan's wave partition turned into tile-column groups (slot_layout.hpp).
// Each group boundary is the column that splits the tiles where the wave boundary splits the
// scheduler's sequence; boundaries that meet are merged, and at most kMaxColumnGroups remain
// (neighbours merged evenly). The tables mean: wave_group[tn] = group of tile column tn (one entry
// per column, not per wave), group_first_slot/group_slot_count = the group's slot range
// (columns x tiles_m real tiles).
WaveGroups make_column_groups(const std::vector<int>& partition, const LaunchGeometry& launch);
// The epilogue's copy of the same groups.
ColumnGroups column_groups_of(const WaveGroups& groups, const LaunchGeometry& launch);

// The plan to run with contiguous row blocks in place of `plan`: rastered along M (its groups are
// tile-column ranges, which a raster along N completes only at the end). That is free where the
// plan was rastered along M already, and not otherwise: 16384x8192x4096 (ping-pong 128x192, H100)
// ran its GEMM at 1567 us rastered along N and 2024-2075 us along M, swizzle 8 or 1
// (docs/results/2026-11-25-contiguous-rows/). Callers that can reorder A instead (the torch ops)
// take contiguous row blocks only for plans rastered along M. A plan's raster names the scheduler's
// own problem (scheduler_frame), which for kernel=pingpong-swap is Cᵀ: C's M is that problem's N,
// so such a plan is rastered along N here.
Plan contiguous_rows_plan(Plan plan);

// Whether a plan is the serial form: comm=nccl, cap=0 (the GEMM on every SM) and exactly one
// group (one collective after the whole GEMM). Nothing overlaps, so GemmCollective runs an
// AllReduce of this form as the serial baseline itself (cuBLAS, then one NCCL call on the
// row-major output), and the tuner offers it where no overlapped plan is predicted to win.
bool is_serial_plan(const Plan& plan);

// Checks the plan's own fields (GEMM configuration built, cap 0 or a multiple of the cluster
// size, swizzle a power of two in 1..8).
void validate_plan(const Plan& plan, const std::string& argument);

}  // namespace kiln::overlap
