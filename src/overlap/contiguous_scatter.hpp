// ReduceScatter to contiguous row blocks (PyTorch's reduce_scatter_tensor and
// fused_matmul_reduce_scatter: rank j receives rows [j*q, (j+1)*q), q = M / world) on top of the
// runtime's block-cyclic layout (slot_layout.hpp: rank j owns the rows r with
// (r % BM) / rps == j). No exchange can turn one into the other after the collective, so the
// rows are reordered before the GEMM instead: the GEMM runs on A', whose row r' is the row of A
// that PyTorch's layout puts where the block-cyclic layout puts r'. Rank j's local row
// lr = t*rps + rr (tile row t) holds A' row t*BM + j*rps + rr, which is taken from A row j*q + lr.
// A' has T*BM rows, T = ceil(q / rps); A' rows past a rank's q rows are padding (never
// delivered as output rows: each rank keeps its first q local rows). Plain arithmetic, used by the
// PyTorch ops and checked by CPU tests against slot_layout's global_row.
#pragma once

#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

struct ContiguousScatterRows {
  int m = 0;                 // rows of A (the GEMM's M before reordering)
  int world = 1;             // ranks; each receives q = m / world rows
  int tile_m = 0;            // BM of the GEMM that runs on A'
  int rows_per_rank = 0;     // q
  int rows_per_subtile = 0;  // rps = BM / world
  int tile_rows = 0;         // T = ceil(q / rps)
  int padded_m = 0;          // rows of A': T * BM

  // The row of A behind row `permuted_row` of A', or -1 for a padding row.
  int source_row(int permuted_row) const {
    const int t = permuted_row / tile_m;
    const int j = (permuted_row % tile_m) / rows_per_subtile;
    const int local = t * rows_per_subtile + permuted_row % rows_per_subtile;
    return local < rows_per_rank ? j * rows_per_rank + local : -1;
  }
};

// Throws kiln::UsageError naming the rule when `m` is not a positive multiple of `world`, or
// `tile_m` is not a positive multiple of `world`.
ContiguousScatterRows contiguous_scatter_rows(int m, int world, int tile_m);

}  // namespace kiln::overlap
