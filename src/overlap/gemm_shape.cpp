// Text forms of the GEMM values (see gemm_shape.hpp).
#include "overlap/gemm_shape.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "core/error.hpp"

namespace kiln::overlap {

std::string weight_layout_name(WeightLayout layout) {
  return layout == WeightLayout::kNK ? "nk" : "kn";
}

WeightLayout parse_weight_layout(const std::string& text, const std::string& argument) {
  if (text == "nk") return WeightLayout::kNK;
  if (text == "kn") return WeightLayout::kKN;
  throw UsageError(argument + " " + text +
                   ": unknown weight layout; accepted: nk (B stored N×K, C = A·Bᵀ), kn (K×N)");
}

std::string shape_name(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

GemmShape parse_shape(const std::string& text, const std::string& argument) {
  GemmShape shape;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d%c", &shape.m, &shape.n, &shape.k, &extra) != 3) {
    throw UsageError(fmt::format("{} {}: expected MxNxK, e.g. 4096x8192x8192", argument, text));
  }
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.n % 8 || shape.k % 8) {
    throw UsageError(
        fmt::format("{} {}: M, N, K must be positive, N and K multiples of 8", argument, text));
  }
  return shape;
}

std::vector<GemmShape> default_overlap_shapes() {
  return {{4096, 8192, 8192},  {8192, 8192, 8192}, {16384, 8192, 4096},
          {8192, 4096, 14336}, {4096, 8192, 2048}, {16384, 16384, 2048}};
}

std::string overlap_op_name(OverlapOp op) {
  return op == OverlapOp::kReduceScatter ? "rs" : "ar";
}

OverlapOp parse_overlap_op(const std::string& text, const std::string& argument) {
  if (text == "rs" || text == "reducescatter") return OverlapOp::kReduceScatter;
  if (text == "ar" || text == "allreduce") return OverlapOp::kAllReduce;
  throw UsageError(argument + " " + text +
                   ": unknown; accepted: rs (ReduceScatter), ar (AllReduce)");
}

std::string tile_name(TileShape tile) {
  return std::to_string(tile.m) + "x" + std::to_string(tile.n);
}

}  // namespace kiln::overlap
