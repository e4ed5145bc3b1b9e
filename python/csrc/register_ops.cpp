// Registers kiln's ops with PyTorch's dispatcher (TORCH_LIBRARY(kiln, ...)): the schemas, CUDA
// kernels for the overlap ops, and the group bootstrap helpers the Python package calls. The fake
// (meta) kernels that torch.compile needs are registered in Python (kiln/_fake.py), where the
// group's size is known.
#include <torch/library.h>

#include "core/error.hpp"
#include "group_registry.hpp"
#include "overlap_ops.hpp"

namespace kiln::torch_ops {
namespace {

void init_group(const std::string& group_name, int64_t rank, int64_t world_size, int64_t gpu_slot,
                int64_t ranks_per_gpu, const at::Tensor& unique_id, double timeout_seconds) {
  TORCH_CHECK_VALUE(world_size >= 1 && rank >= 0 && rank < world_size, "kiln::_init_group: rank ",
                    rank, " of world size ", world_size, ": need 0 <= rank < world_size");
  TORCH_CHECK_VALUE(ranks_per_gpu >= 1 && gpu_slot >= 0 && gpu_slot < ranks_per_gpu,
                    "kiln::_init_group: need 0 <= gpu_slot < ranks_per_gpu, got gpu_slot ",
                    gpu_slot, " and ranks_per_gpu ", ranks_per_gpu);
  TORCH_CHECK_VALUE(timeout_seconds > 0, "kiln::_init_group: timeout_s must be > 0, got ",
                    timeout_seconds);
  try {
    GroupRegistry::instance().add(group_name, static_cast<int>(rank), static_cast<int>(world_size),
                                  static_cast<int>(gpu_slot), static_cast<int>(ranks_per_gpu),
                                  unique_id, timeout_seconds);
  } catch (const kiln::UsageError& e) {
    TORCH_CHECK_VALUE(false, "kiln::_init_group: ", e.what());
  } catch (const kiln::Error& e) {
    TORCH_CHECK(false, "kiln::_init_group: ", e.what());
  }
}

// Collective over the group's ranks (the cached objects' destructors exchange with the peers); a
// name never registered, or released already, is left alone.
void release_group(const std::string& group_name) {
  GroupRegistry::instance().remove(group_name);
}

// Every group this process registered, in name order (see GroupRegistry::remove_all); nothing
// when none is.
void release_all() {
  GroupRegistry::instance().remove_all();
}

bool has_group(const std::string& group_name) {
  return GroupRegistry::instance().contains(group_name);
}

}  // namespace
}  // namespace kiln::torch_ops

TORCH_LIBRARY(kiln, m) {
  using namespace kiln::torch_ops;
  // The schemas of torch.ops.symm_mem's async-TP ops (torch/csrc/distributed/c10d/
  // SymmetricMemory.cpp), so that hooks written for them can call kiln's.
  m.def(
      "fused_matmul_reduce_scatter(Tensor A, Tensor B, str reduce_op, int scatter_dim, "
      "str group_name) -> Tensor");
  m.def(
      "fused_all_gather_matmul(Tensor A, Tensor[] Bs, int gather_dim, str group_name, *, "
      "bool return_A=True) -> (Tensor?, Tensor[])");
  m.def("matmul_all_reduce(Tensor A, Tensor B, str group_name) -> Tensor");
  m.def(
      "matmul_all_reduce_rmsnorm(Tensor A, Tensor B, Tensor weight, float eps, str group_name) "
      "-> Tensor");
  // Bootstrap, release and introspection (the Python package's kiln.init_group, kiln.release_group,
  // kiln.release_all and kiln.plan_of).
  m.def("_nccl_unique_id() -> Tensor", &nccl_unique_id);
  m.def(
      "_init_group(str group_name, int rank, int world_size, int gpu_slot, int ranks_per_gpu, "
      "Tensor unique_id, float timeout_s) -> ()",
      &init_group);
  m.def("_release_group(str group_name) -> ()", &release_group);
  m.def("_release_all() -> ()", &release_all);
  m.def("_has_group(str group_name) -> bool", &has_group);
  m.def(
      "_describe_plan(str op, int m, int n, int k, ScalarType dtype, bool weight_kn, "
      "str group_name) -> str",
      &describe_plan);
}

TORCH_LIBRARY_IMPL(kiln, CUDA, m) {
  using namespace kiln::torch_ops;
  m.impl("fused_matmul_reduce_scatter", &fused_matmul_reduce_scatter);
  m.impl("fused_all_gather_matmul", &fused_all_gather_matmul);
  m.impl("matmul_all_reduce", &matmul_all_reduce);
  m.impl("matmul_all_reduce_rmsnorm", &matmul_all_reduce_rmsnorm);
}

// CPU tensors reach the same functions, whose checks refuse them with a ValueError naming the
// argument (instead of the dispatcher's "could not run ... with arguments from the CPU backend").
TORCH_LIBRARY_IMPL(kiln, CPU, m) {
  using namespace kiln::torch_ops;
  m.impl("fused_matmul_reduce_scatter", &fused_matmul_reduce_scatter);
  m.impl("fused_all_gather_matmul", &fused_all_gather_matmul);
  m.impl("matmul_all_reduce", &matmul_all_reduce);
  m.impl("matmul_all_reduce_rmsnorm", &matmul_all_reduce_rmsnorm);
}
