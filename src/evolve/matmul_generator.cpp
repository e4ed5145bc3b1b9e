// Matmul-family code generation (see matmul_generator.hpp). The shapes are the problems' own
// (problems/kb1_matmul.cpp's views): C (m x n, row-major) = A (m x k) @ B (k x n) per batch, A
// stored k x m when transposed, B stored n x k when transposed.
#include "evolve/matmul_generator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "evolve/matmul_mma_generator.hpp"
#include "evolve/matmul_sm90_generator.hpp"
#include "evolve/matmul_triangle_generator.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {

std::optional<MatmulKind> matmul_kind_of(const std::string& problem) {
  static const std::map<std::string, MatmulKind> kinds = {
      {"kb1-1-square-matmul", {"square"}},
      {"kb1-2-matmul", {"mkn"}},
      {"kb1-3-batched-matmul", {"batched"}},
      {"kb1-6-matmul-large-k", {"mkn"}},
      {"kb1-7-matmul-small-k", {"mkn"}},
      {"kb1-8-matmul-irregular", {"mkn", false, false, true}},
      {"kb1-9-tall-skinny-matmul", {"tall-skinny"}},
      {"kb1-10-3d-tensor-matmul", {"3d"}},
      {"kb1-11-4d-tensor-matmul", {"4d"}},
      {"kb1-13-symmetric-matmul", {"square"}},
      // Products of two upper (lower) triangular matrices are upper (lower) triangular, so the
      // plain product is triu / tril(A @ B) exactly: each term off the triangle has a zero factor
      // (and 3xTF32 splits 0 into 0 + 0). Skipping the zero blocks is exploit-structure's work
      // (matmul_triangle_generator.hpp).
      {"kb1-14-upper-triangular-matmul", {"square", false, false, false, 'U'}},
      {"kb1-15-lower-triangular-matmul", {"square", false, false, false, 'L'}},
      {"kb1-16-matmul-transposed-a", {"mkn", true, false}},
      {"kb1-17-matmul-transposed-b", {"mkn", false, true}},
      {"kb1-18-matmul-transposed-both", {"mkn", true, true}}};
  const auto it = kinds.find(problem);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

const StrategySet& matmul_generated_strategies(const std::string& problem) {
  static const StrategySet generated = {"cutlass-sm80-mma", "cutlass-sm90", "warp-mma-tiles",
                                        "tf32x3"};
  // warp-mma-tiles takes K up to kMmaTileMaxK: not kb1-6's 524288.
  static const StrategySet long_k = {"cutlass-sm80-mma", "cutlass-sm90", "tf32x3"};
  static const StrategySet structured = {"cutlass-sm80-mma", "cutlass-sm90", "tf32x3",
                                         "exploit-structure"};
  const std::optional<MatmulKind> kind = matmul_kind_of(problem);
  if (kind && kind->triangle != 0) return structured;
  return problem == "kb1-6-matmul-large-k" ? long_k : generated;
}

namespace {
constexpr int kMaxWarps = 8;
constexpr int kMaxWarpTile = 64;
}  // namespace

MatmulConfig matmul_config_of(const Genome& g) {
  MatmulConfig c{};
  c.tile_m = g.knob("cutlass-sm80-mma", "tile_m");
  c.tile_n = g.knob("cutlass-sm80-mma", "tile_n");
  c.tile_k = g.knob("cutlass-sm80-mma", "tile_k");
  // A block of at most kMaxWarps warps whose warp tiles are at most 64 x 64: a 3xTF32 warp tile
  // keeps warp_m * warp_n / 32 accumulators a thread plus its split fragments, and 512 threads
  // of 64 x 64 tiles cannot be resident (65536 registers an SM): such launches failed on the
  // H100 (256 x 256 tiles, 2026-11-25). 512 threads on a 64-row tile also leave CUTLASS's load
  // maps less than one 16-byte vector a thread (a static assertion). So the block tile is at
  // most 8 x 64 x 64: 256 x 256 becomes 256 x 128.
  while (c.tile_m * c.tile_n > kMaxWarps * kMaxWarpTile * kMaxWarpTile) {
    if (c.tile_n >= c.tile_m)
      c.tile_n /= 2;
    else
      c.tile_m /= 2;
  }
  const int warp = g.knob("cutlass-sm80-mma", "warp");
  c.warp_m = std::min(warp, c.tile_m);
  c.warp_n = std::min(warp, c.tile_n);
  // Larger warp tiles where the block tile would need more warps.
  while ((c.tile_m / c.warp_m) * (c.tile_n / c.warp_n) > kMaxWarps) {
    if (c.warp_m <= c.warp_n && c.warp_m < std::min(c.tile_m, kMaxWarpTile))
      c.warp_m *= 2;
    else
      c.warp_n *= 2;
  }
  c.stages = g.knob("cutlass-sm80-mma", "stages");
  const auto bytes = [&](int stages) { return stages * (c.tile_m + c.tile_n) * c.tile_k * 4; };
  while (c.stages > 2 && bytes(c.stages) > 200 * 1024) --c.stages;
  c.swizzle = g.knob("cutlass-sm80-mma", "swizzle");
  c.split_k = g.knob("cutlass-sm80-mma", "split_k");
  return c;
}

std::string cutlass_gemm_type(const std::string& name, bool a_column_major, bool b_column_major,
                              const MatmulConfig& c, int alignment) {
  return fmt::format(
      R"(using {name} = cutlass::gemm::device::GemmUniversal<
    float, {layout_a}, float, {layout_b}, float, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<{tm}, {tn}, {tk}>, cutlass::gemm::GemmShape<{wm}, {wn}, {tk}>,
    cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, {alignment}, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<{swizzle}>, {stages}, {alignment},
    {alignment}, cutlass::arch::OpMultiplyAddFastF32>;
)",
      fmt::arg("name", name),
      fmt::arg("layout_a",
               a_column_major ? "cutlass::layout::ColumnMajor" : "cutlass::layout::RowMajor"),
      fmt::arg("layout_b",
               b_column_major ? "cutlass::layout::ColumnMajor" : "cutlass::layout::RowMajor"),
      fmt::arg("tm", c.tile_m), fmt::arg("tn", c.tile_n), fmt::arg("tk", c.tile_k),
      fmt::arg("wm", c.warp_m), fmt::arg("wn", c.warp_n), fmt::arg("alignment", alignment),
      fmt::arg("swizzle", c.swizzle), fmt::arg("stages", c.stages));
}

void fill_cutlass_header(std::string& source, const Genome& g, const MatmulConfig& c,
                         const std::string& problem) {
  replace_all(source, "$PROBLEM", problem);
  replace_all(source, "$HASH", fmt::format("{:016x}", g.hash()));
  replace_all(source, "$DESCRIBE", g.describe());
  replace_all(source, "$TILE", fmt::format("{}x{}x{}", c.tile_m, c.tile_n, c.tile_k));
  replace_all(source, "$WARP", fmt::format("{}x{}", c.warp_m, c.warp_n));
  replace_all(source, "$STAGES", std::to_string(c.stages));
  replace_all(source, "$SWIZZLE", std::to_string(c.swizzle));
}

std::string dimension_helper() {
  return R"(// The problem's dimension `name` (0 when absent).
static long long dim(const KilnCandidateArgs* a, const char* name) {
  for (int i = 0; i < a->num_dims; ++i)
    if (std::strcmp(a->dim_names[i], name) == 0) return a->dims[i];
  return 0;
}
)";
}

std::string cutlass_run_gemm_helper() {
  return R"(
// CUTLASS's workspace (serial split-K's semaphores), kept between calls and grown when needed,
// freed when the library is unloaded (a judge server loads candidate after candidate).
static void* workspace = nullptr;
static size_t workspace_bytes = 0;
__attribute__((destructor)) static void release_workspace() {
  if (workspace != nullptr) cudaFree(workspace);
}

// D = alpha A B per batch (or split-K slice: `count`), C row-major; 0, or where it failed.
template <class Gemm>
static int run_gemm(cutlass::gemm::GemmUniversalMode mode, long long m, long long n, long long k,
                    int count, float alpha, const float* A, const float* B, float* C,
                    long long stride_a, long long stride_b, long long stride_c, long long lda,
                    long long ldb, long long ldc, cudaStream_t stream) {
  typename Gemm::Arguments args(mode, {static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)},
                                count, {alpha, 0.0f}, A, B, C, C, stride_a, stride_b, stride_c,
                                stride_c, lda, ldb, ldc, ldc);
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 5;
  const size_t need = Gemm::get_workspace_size(args);
  if (need > workspace_bytes) {
    cudaFree(workspace);
    workspace = nullptr;
    workspace_bytes = 0;
    if (cudaMalloc(&workspace, need) != cudaSuccess) return 6;
    workspace_bytes = need;
  }
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return 7;
  if (gemm(stream) != cutlass::Status::kSuccess) return 8;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
}

std::string cutlass_host_helpers() {
  return dimension_helper() + cutlass_run_gemm_helper();
}

std::string matmul_shape_code(const MatmulKind& kind) {
  if (kind.shape == "square")
    return "  const long long n0 = dim(a, \"N\") > 0 ? dim(a, \"N\") : dim(a, \"M\");\n"
           "  const long long batch = 1, m = n0, n = n0, k = n0;\n";
  if (kind.shape == "batched")
    return "  const long long batch = dim(a, \"batch\"), m = dim(a, \"m\"), n = dim(a, \"n\"), "
           "k = dim(a, \"k\");\n";
  if (kind.shape == "tall-skinny")
    return "  const long long batch = 1, m = dim(a, \"M\"), n = dim(a, \"M\"), k = dim(a, "
           "\"N\");\n";
  if (kind.shape == "3d")
    return "  const long long batch = 1, m = dim(a, \"N\") * dim(a, \"M\"), n = dim(a, \"L\"), "
           "k = dim(a, \"K\");\n";
  if (kind.shape == "4d")
    return "  const long long batch = 1, m = dim(a, \"b\") * dim(a, \"i\") * dim(a, \"j\"), "
           "n = dim(a, \"k\"), k = dim(a, \"l\");\n";
  return "  const long long batch = 1, m = dim(a, \"M\"), n = dim(a, \"N\"), k = dim(a, \"K\");\n";
}

std::string matmul_entry_opening(const MatmulKind& kind, const std::string& max_k) {
  std::string text =
      R"(extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 2 || a->num_outputs < 1 || a->dtype != KILN_FP32) return 2;
$SHAPE  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0 || m > 2147483647LL || n > 2147483647LL ||
      k > $MAX_K || batch > 65535)
    return 3;
  const unsigned long long f = sizeof(float);
  if (a->input_bytes[0] != static_cast<unsigned long long>(batch * m * k) * f ||
      a->input_bytes[1] != static_cast<unsigned long long>(batch * k * n) * f ||
      a->output_bytes[0] != static_cast<unsigned long long>(batch * m * n) * f)
    return 3;
  const float* A = static_cast<const float*>(a->inputs[0]);
  const float* B = static_cast<const float*>(a->inputs[1]);
  float* C = static_cast<float*>(a->outputs[0]);
)";
  replace_all(text, "$SHAPE", matmul_shape_code(kind));
  replace_all(text, "$MAX_K", max_k);
  return text;
}

namespace {

constexpr const char* kSource = R"(// Generated by kiln evolve for $PROBLEM; do not edit.
// Genome $HASH: $DESCRIBE
// CUTLASS 2.x universal GEMM, 3xTF32 on tensor cores: tile $TILE, warp tile $WARP, $STAGES stages,
// swizzle $SWIZZLE, split-K $SPLIT_K (serial, in a fixed order); A $A_LAYOUT, B $B_LAYOUT.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/candidate.h"

$UNIT$DECLARATION
$DIM
$ENTRY  // Leading dimensions of the stored operands (A: k x m when transposed; B: n x k).
  const long long lda = $LDA, ldb = $LDB, ldc = n;
  const int split_k = batch > 1 ? 1 : $SPLIT_K;
  const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && ldc % 4 == 0 &&
                       reinterpret_cast<std::uintptr_t>(A) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(B) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(C) % 16 == 0;
  return $SYMBOL(aligned ? 1 : 0, A, B, C, batch, m, n, k, lda, ldb, ldc, split_k, a->stream);
}
)";

constexpr const char* kUnit = R"(// kiln-unit: begin
// The GEMM of this configuration and these layouts, the same text for every problem and split-K
// (a run-time argument): built once per configuration (kiln's build cache).
$RELEASE#include <cuda_runtime.h>

#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm_universal.h"

namespace $NAMESPACE {
$TYPES$RUN_GEMM}  // namespace $NAMESPACE

// One product: batched (batch > 1) or, with one batch, split over k in split_k serial slices,
// by the 16-byte-aligned instantiation when `aligned`; 0, or where it failed (4: no
// instantiation for unaligned operands here).
extern "C" __attribute__((visibility("hidden"))) int $SYMBOL(
    int aligned, const float* A, const float* B, float* C, long long batch, long long m,
    long long n, long long k, long long lda, long long ldb, long long ldc, int split_k,
    void* stream) {
  const bool batched = batch > 1;
  const auto mode = batched ? cutlass::gemm::GemmUniversalMode::kBatched
                            : cutlass::gemm::GemmUniversalMode::kGemm;
  const int count = batched ? static_cast<int>(batch) : split_k;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (aligned)
    return $NAMESPACE::run_gemm<$NAMESPACE::GemmAligned>(
        mode, m, n, k, count, 1.0f, A, B, C, m * k, k * n, m * n, lda, ldb, ldc, s);
$UNALIGNED}
// kiln-unit: end
)";

constexpr const char* kDeclaration =
    R"(extern "C" __attribute__((visibility("hidden"))) int $SYMBOL(
    int aligned, const float* A, const float* B, float* C, long long batch, long long m,
    long long n, long long k, long long lda, long long ldb, long long ldc, int split_k,
    void* stream);
)";

// The operands' stored layouts as a name part: "" for row-major A and B (the names every unit had
// before there were several: the row-major units built ahead stay valid), else _ta, _tb, _tab.
std::string layout_suffix(bool a_t, bool b_t) {
  return a_t && b_t ? "_tab" : a_t ? "_ta" : b_t ? "_tb" : "";
}

}  // namespace

std::string sm80_gemm_symbol(bool a_t, bool b_t) {
  return "kiln_sm80_gemm" + layout_suffix(a_t, b_t);
}

std::string sm80_gemm_unit(bool a_t, bool b_t, bool irregular, const MatmulConfig& c) {
  std::string types = cutlass_gemm_type("GemmAligned", a_t, b_t, c, 4);
  if (irregular) types += cutlass_gemm_type("GemmUnaligned", a_t, b_t, c, 1);
  std::string unit = kUnit;
  replace_all(unit, "$RELEASE", kCutlassReleaseText);
  replace_all(unit, "$TYPES", types);
  replace_all(unit, "$RUN_GEMM", cutlass_run_gemm_helper());
  replace_all(
      unit, "$UNALIGNED",
      irregular ? "  return $NAMESPACE::run_gemm<$NAMESPACE::GemmUnaligned>(\n"
                  "      mode, m, n, k, count, 1.0f, A, B, C, m * k, k * n, m * n, lda, ldb, ldc, "
                  "s);\n"
                : "  return 4;  // leading dimensions not multiples of 4: no instantiation here\n");
  replace_all(unit, "$NAMESPACE", "kiln_unit" + layout_suffix(a_t, b_t));
  replace_all(unit, "$SYMBOL", sm80_gemm_symbol(a_t, b_t));
  return unit;
}

std::string sm80_gemm_declaration(bool a_t, bool b_t) {
  std::string text = kDeclaration;
  replace_all(text, "$SYMBOL", sm80_gemm_symbol(a_t, b_t));
  return text;
}

std::string generate_matmul_candidate(const Genome& g, const std::string& problem) {
  const std::optional<MatmulKind> kind = matmul_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a general matmul problem", problem));
  require_translatable(g, Family::kMatmul, matmul_generated_strategies(problem), "matmul");
  if (g.has("exploit-structure")) {
    if (!g.has("cutlass-sm90"))
      throw UsageError(
          "exploit-structure: generated with cutlass-sm90 only (a grouped GEMM of the triangle's "
          "blocks)");
    return generate_triangle_matmul_candidate(g, problem, *kind);
  }
  if (g.has("cutlass-sm90")) return generate_sm90_matmul_candidate(g, problem, *kind);
  if (g.has("warp-mma-tiles")) return generate_mma_tile_matmul_candidate(g, problem, *kind);
  const MatmulConfig c = matmul_config_of(g);
  std::string source = kSource;
  replace_all(source, "$UNIT", sm80_gemm_unit(kind->a_t, kind->b_t, kind->irregular, c));
  replace_all(source, "$DECLARATION", sm80_gemm_declaration(kind->a_t, kind->b_t));
  replace_all(source, "$SYMBOL", sm80_gemm_symbol(kind->a_t, kind->b_t));
  replace_all(source, "$DIM", dimension_helper());
  replace_all(source, "$ENTRY", matmul_entry_opening(*kind, "2147483647LL"));
  replace_all(source, "$LDA", kind->a_t ? "m" : "k");
  replace_all(source, "$LDB", kind->b_t ? "k" : "n");
  fill_cutlass_header(source, g, c, problem);
  replace_all(source, "$SPLIT_K", std::to_string(c.split_k));
  replace_all(source, "$A_LAYOUT", kind->a_t ? "stored k x m" : "m x k");
  replace_all(source, "$B_LAYOUT", kind->b_t ? "stored n x k" : "k x n");
  return source;
}

}  // namespace kiln::evolve
