// Post-communication reorder, fused into the next element-wise kernel: each reads the rows this
// rank owns from the slot-ordered buffer the collective delivered (slot_layout.hpp) and writes
// them row-major. The same kernels read a plain row-major input when `slot_of_tile` is null, which
// is the baseline the reorder's overhead is measured against.
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

// Where the rows come from: slot-ordered (slot_of_tile != nullptr) or row-major (nullptr, with
// `rows` x `n` contiguous in `source`).
struct ReorderSource {
  static constexpr int kMaxAddends = 7;
  const void* source = nullptr;
  const int* slot_of_tile = nullptr;
  SlotGeometry geometry{};
  int rank = 0;  // which subtile of each tile this rank received (0 for AllReduce)
  // Further buffers of the same layout whose values are added to source's (fp32 sum, one
  // rounding): the reduction of a copy-engine exchange, done while reordering.
  int addend_count = 0;
  const void* addends[kMaxAddends] = {};
  // Also added, when not null: this rank's own subtile, read straight from the GEMM's slot
  // buffer (ReduceScatter by copy engine: no local copy into the received layout). Needs the
  // wave-group tables to find a slot's group; `source` may then be null (one rank).
  const void* own_slots = nullptr;
  const int* wave_group = nullptr;
  const int* group_first_slot = nullptr;
  const int* group_slot_count = nullptr;
  int grid_ctas = 0;
  // comm=ce2: the output is every row of the AllReduce, and row r's values sit in the region of
  // the rank that owns r's subtile (owner (r % BM) / rows_per_subtile, at received_offset in that
  // region: what a ReduceScatter delivers to it). owners > 0 selects this mode: owner_regions[j]
  // is rank j's reduced slices (this rank's own buffer for itself); source and the addends are
  // unused and nothing is summed.
  static constexpr int kMaxOwners = 8;
  int owners = 0;
  const void* owner_regions[kMaxOwners] = {};
};

// out[r][c] = value of local row r, column c, for r < rows, c < n. n % 8 == 0.
void restore_row_major(const ReorderSource& in, core::DType dtype, int rows, int n, void* out,
                       cudaStream_t stream);

// out[r][c] = x[r][c] / sqrt(mean_c(x[r][c]^2) + eps) * weight[c], fp32 arithmetic, x the local
// rows as above. n % 8 == 0 and n <= 16384.
void rmsnorm_rows(const ReorderSource& in, core::DType dtype, int rows, int n, const void* weight,
                  float eps, void* out, cudaStream_t stream);

}  // namespace kiln::overlap
