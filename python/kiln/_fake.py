"""Fake (meta) kernels of kiln's ops: output shapes, dtypes and strides without running anything,
for torch.compile and torch.library.opcheck. They mirror the CUDA kernels' results exactly,
strides included (a gathered dimension other than 0 comes back as a moved view)."""
import torch

from ._groups import group_size


def _moved(shape, dim):
    shape = list(shape)
    return [shape[dim]] + shape[:dim] + shape[dim + 1:]


def _dim(dim, ndim):
    return dim + ndim if dim < 0 else dim


@torch.library.register_fake("kiln::fused_matmul_reduce_scatter")
def _fused_matmul_reduce_scatter(A, B, reduce_op, scatter_dim, group_name):
    world = group_size(group_name)
    shape = list(A.shape[:-1]) + [B.shape[1]]
    shape[_dim(scatter_dim, A.dim())] //= world
    return A.new_empty(shape)


@torch.library.register_fake("kiln::fused_all_gather_matmul")
def _fused_all_gather_matmul(A, Bs, gather_dim, group_name, *, return_A=True):
    world = group_size(group_name)
    dim = _dim(gather_dim, A.dim())
    moved = _moved(A.shape, dim)
    moved[0] *= world
    gathered = A.new_empty(moved).movedim(0, dim) if return_A else None
    outs = [A.new_empty(moved[:-1] + [B.shape[1]]).movedim(0, dim) for B in Bs]
    return gathered, outs


@torch.library.register_fake("kiln::matmul_all_reduce")
def _matmul_all_reduce(A, B, group_name):
    return A.new_empty(list(A.shape[:-1]) + [B.shape[1]])


@torch.library.register_fake("kiln::matmul_all_reduce_rmsnorm")
def _matmul_all_reduce_rmsnorm(A, B, weight, eps, group_name):
    return A.new_empty(list(A.shape[:-1]) + [B.shape[1]])
