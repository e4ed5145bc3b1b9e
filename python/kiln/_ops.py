"""Python names for kiln's ops (thin wrappers over torch.ops.kiln.*, which hooks call directly)."""
import torch


def fused_matmul_reduce_scatter(A, B, reduce_op: str, scatter_dim: int, group_name: str):
    """reduce_scatter(A @ B, scatter_dim): rank r gets block r of dimension ``scatter_dim``."""
    return torch.ops.kiln.fused_matmul_reduce_scatter(A, B, reduce_op, scatter_dim, group_name)


def fused_all_gather_matmul(A, Bs, gather_dim: int, group_name: str, *, return_A: bool = True):
    """(all_gather(A, gather_dim) or None, [all_gather(A, gather_dim) @ B for B in Bs])."""
    return torch.ops.kiln.fused_all_gather_matmul(A, Bs, gather_dim, group_name,
                                                  return_A=return_A)


def matmul_all_reduce(A, B, group_name: str):
    """all_reduce(A @ B) over the group."""
    return torch.ops.kiln.matmul_all_reduce(A, B, group_name)


def matmul_all_reduce_rmsnorm(A, B, weight, eps: float, group_name: str):
    """rms_norm(all_reduce(A @ B), weight, eps), the norm fused into the post-communication reorder."""
    return torch.ops.kiln.matmul_all_reduce_rmsnorm(A, B, weight, eps, group_name)


def plan_of(op: str, m: int, n: int, k: int, dtype: torch.dtype, group_name: str,
            weight_kn: bool = True) -> str:
    """The overlap plan kiln runs for ``op`` ("rs" or "ar") on an M x N x K GEMM (collective)."""
    return torch.ops.kiln._describe_plan(op, m, n, k, dtype, weight_kn, group_name)
