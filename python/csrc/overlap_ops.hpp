// kiln's PyTorch ops (registered in register_ops.cpp). The first two have the schemas of
// torch.ops.symm_mem.fused_matmul_reduce_scatter / fused_all_gather_matmul, so the hooks that call
// PyTorch's async-TP (torchtitan, vLLM's async-TP pass) can call kiln's instead.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::torch_ops {

// reduce_scatter(A @ B, scatter_dim) over the group: rank r gets the contiguous row block r.
// A: [..., K] with dimension scatter_dim (a leading one) divisible by the world size; B: K x N;
// reduce_op "sum" or "avg". A scatter_dim other than 0 costs a copy of A with that dimension
// moved to the front.
at::Tensor fused_matmul_reduce_scatter(const at::Tensor& a, const at::Tensor& b,
                                       const std::string& reduce_op, int64_t scatter_dim,
                                       const std::string& group_name);

// all_gather(A_shard, gather_dim) and its product with each B, the product of each arriving
// shard computed while the next shards travel. gather_dim: a leading dimension of A (other than
// 0 it costs a copy of A_shard with that dimension moved to the front).
std::tuple<std::optional<at::Tensor>, std::vector<at::Tensor>> fused_all_gather_matmul(
    const at::Tensor& a_shard, const std::vector<at::Tensor>& bs, int64_t gather_dim,
    const std::string& group_name, bool return_a);

// all_reduce(A @ B) over the group; with RMSNorm(weight, eps) fused into the reorder.
at::Tensor matmul_all_reduce(const at::Tensor& a, const at::Tensor& b,
                             const std::string& group_name);
at::Tensor matmul_all_reduce_rmsnorm(const at::Tensor& a, const at::Tensor& b,
                                     const at::Tensor& weight, double eps,
                                     const std::string& group_name);

// The plan kiln runs for an op and shape on a group, and where it came from (for logs and the
// benchmark's provenance): "plan text | source | padded M | B kn|nk". Made collectively on first
// use, like an op's; `weight_kn` is this rank's B layout then, and rank 0's wins (the last field
// says which the object runs; a call with the other one copies B).
std::string describe_plan(const std::string& op, int64_t m, int64_t n, int64_t k,
                          at::ScalarType dtype, bool weight_kn, const std::string& group_name);

}  // namespace kiln::torch_ops
