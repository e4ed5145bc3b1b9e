"""The cases every rank of a test world runs (test_ops.py starts the ranks, several on one GPU).

Each case runs on all ranks in the same order with inputs every rank can recompute (seeded by
rank), so each rank checks its own output against a float32 reference of the serial computation
(the matmuls, then the collective's arithmetic) without asking the others. Memory is poisoned with
NaN before each case, so an output element the op never writes shows up.
"""
import os
import sys
import tempfile
import time
import traceback
import zlib

import torch
import torch.distributed as dist
import torch.nn.functional as F

DTYPES = (torch.bfloat16, torch.float16)


def operand(seed, shape, dtype):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.rand(shape, generator=g, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)


def weight(seed, k, n, dtype, layout):
    """B of K x N: stored K x N ("kn"), or as the transpose of an N x K matrix ("nk")."""
    if layout == "kn":
        return operand(seed, (k, n), dtype)
    return operand(seed, (n, k), dtype).t()


def poison():
    block = torch.full((48 << 20,), float("nan"), dtype=torch.float16, device="cuda")
    del block


def check_close(got, ref, what):
    assert got.shape == ref.shape, f"{what}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}"
    got = got.float()
    assert torch.isfinite(got).all(), f"{what}: non-finite elements (unwritten output?)"
    err = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    assert err <= 2e-2 * scale + 1e-3, f"{what}: max error {err:.4g} against values up to {scale:.4g}"


def expect_error(kind, fragment, call, what):
    try:
        call()
    except kind as e:
        assert fragment in str(e), f"{what}: {kind.__name__} without '{fragment}': {e}"
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: expected {kind.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"{what}: expected {kind.__name__}, nothing was raised")


class Cases:
    def __init__(self, rank, world, group_name):
        self.rank, self.world, self.name = rank, world, group_name

    # Seeds from the case's tag (zlib.crc32: Python's hash() differs between processes).
    def all_operands(self, tag, shape, dtype):
        return [operand(zlib.crc32(repr((tag, r)).encode()), shape, dtype)
                for r in range(self.world)]

    def all_weights(self, tag, k, n, dtype, layout):
        return [weight(zlib.crc32(repr((tag, "B", r)).encode()), k, n, dtype, layout)
                for r in range(self.world)]

    def reduce_scatter_rows(self):
        # The last shape's row chunks (M / world rows of 4096 elements per subtile) exceed
        # 256 KiB: the 2-D copy path of the reordering; the others take ATen's strided copy.
        # 1024x2048: whole tiles per rank and not tall, the runtime's contiguous row blocks.
        for m, n, k in ((1024, 512, 256), (1000, 264, 128), (520, 1024, 64), (1032, 256, 4096),
                        (1024, 2048, 128)):
            for dtype in DTYPES:
                for layout in ("kn", "nk"):
                    tag = ("rs", m, n, k, str(dtype), layout)
                    a = self.all_operands(tag, (m, k), dtype)
                    b = self.all_weights(tag, k, n, dtype, layout)
                    poison()
                    got = torch.ops.kiln.fused_matmul_reduce_scatter(
                        a[self.rank], b[self.rank], "sum", 0, self.name)
                    ref = sum(x.float() @ y.float() for x, y in zip(a, b))
                    q = m // self.world
                    check_close(got, ref[self.rank * q:(self.rank + 1) * q], f"RS {tag}")
            if self.world > 1:
                # Whole tiles per rank and not a tall GEMM: the runtime writes the contiguous row
                # blocks itself (no copy of A); rows that do not split into 64-row tiles per rank
                # are reordered.
                import kiln
                plan = kiln.plan_of("rs", m, n, k, DTYPES[0], self.name)
                # Either algorithm may win the timing at creation (reduce_scatter_algorithms);
                # the layout checks are the plan's.
                chunked = "runs as the chunked ReduceScatter" in plan
                assert chunked or "kept over the chunked ReduceScatter" in plan \
                    or "chunked ReduceScatter not considered" in plan, f"RS {m}x{n}x{k}: {plan}"
                if m % (self.world * 256) == 0 and m <= n:
                    assert chunked or "contiguous rows" in plan, f"RS {m}x{n}x{k}: {plan}"
                if (m // self.world) % 64 != 0:
                    assert "contiguous rows" not in plan, f"RS {m}x{n}x{k}: {plan}"
                # Whole tiles per rank: the layout is taken, or (a tall GEMM rastered along N)
                # timed against the copy of A at creation.
                if m % (self.world * 256) == 0:
                    assert chunked or "contiguous rows" in plan or "timed at creation" in plan, \
                        f"RS {m}x{n}x{k}: {plan}"

    def reduce_scatter_algorithms(self):
        """KILN_TORCH_RS_ALGORITHM: "chunked" runs async-TP's algorithm from kiln's parts and
        "plan" kiln's plan, both correct against the serial computation (each on a shape no other
        case makes, so the object is created under the setting); a setting that differs between
        the ranks raises ValueError on every rank, and the shape runs afterwards."""
        if self.world == 1:
            return
        import kiln
        saved = os.environ.get("KILN_TORCH_RS_ALGORITHM")
        try:
            for setting, m in (("chunked", 1536), ("plan", 1792)):
                os.environ["KILN_TORCH_RS_ALGORITHM"] = setting
                n, k = 320, 160  # shapes no other case makes
                for dtype in DTYPES:
                    for layout in ("kn", "nk"):
                        tag = ("rs-algorithm", setting, str(dtype), layout)
                        a = self.all_operands(tag, (m, k), dtype)
                        b = self.all_weights(tag, k, n, dtype, layout)
                        for avg in (False, True):
                            poison()
                            got = torch.ops.kiln.fused_matmul_reduce_scatter(
                                a[self.rank], b[self.rank], "avg" if avg else "sum", 0, self.name)
                            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
                            q = m // self.world
                            want = ref[self.rank * q:(self.rank + 1) * q] / (self.world if avg else 1)
                            check_close(got, want, f"RS {tag} avg={avg}")
                plan = kiln.plan_of("rs", m, n, k, DTYPES[0], self.name)
                assert ("runs as the chunked ReduceScatter" in plan) == (setting == "chunked"), \
                    f"KILN_TORCH_RS_ALGORITHM={setting}: {plan}"
            dtype, m, n, k = torch.bfloat16, 896, 320, 160
            tag = ("rs-algorithm-mismatch",)
            a = self.all_operands(tag, (m, k), dtype)
            b = self.all_weights(tag, k, n, dtype, "kn")
            os.environ["KILN_TORCH_RS_ALGORITHM"] = "chunked" if self.rank == 0 else "plan"

            def call():
                return torch.ops.kiln.fused_matmul_reduce_scatter(a[self.rank], b[self.rank],
                                                                  "sum", 0, self.name)
            expect_error(ValueError, "differs between the ranks", call, "mismatched settings")
            os.environ["KILN_TORCH_RS_ALGORITHM"] = "bogus"
            expect_error(ValueError, "accepted values are auto", call, "an unknown setting")
            os.environ.pop("KILN_TORCH_RS_ALGORITHM")
            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
            q = m // self.world
            check_close(call(), ref[self.rank * q:(self.rank + 1) * q], "RS after the mismatch")
        finally:
            if saved is None:
                os.environ.pop("KILN_TORCH_RS_ALGORITHM", None)
            else:
                os.environ["KILN_TORCH_RS_ALGORITHM"] = saved

    # The cases a world of 3 ranks runs: the others' shapes and plans assume a power of two.
    ODD_WORLD = ("reduce_scatter_odd_world",)

    def reduce_scatter_odd_world(self):
        """3 ranks (a world that is not a power of two; the runtime's block-cyclic layout splits a
        128-row tile only into a power of two of subtiles, so the plan takes padded or contiguous
        rows): the op is correct against the serial computation for sum and avg in both layouts,
        with the timed choice of algorithm and with each algorithm forced
        (KILN_TORCH_RS_ALGORITHM, each on shapes of its own); rows that do not split into 3 raise
        ValueError."""
        if self.world != 3:
            return
        import kiln
        saved = os.environ.get("KILN_TORCH_RS_ALGORITHM")
        try:
            for setting, shapes in (("auto", ((768, 512, 256), (1536, 264, 128))),
                                    ("plan", ((1152, 512, 256),)),
                                    ("chunked", ((1920, 264, 128),))):
                os.environ["KILN_TORCH_RS_ALGORITHM"] = setting
                for m, n, k in shapes:
                    for dtype in DTYPES:
                        for layout in ("kn", "nk"):
                            tag = ("rs-odd", setting, m, n, k, str(dtype), layout)
                            a = self.all_operands(tag, (m, k), dtype)
                            b = self.all_weights(tag, k, n, dtype, layout)
                            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
                            q = m // self.world
                            for avg in (False, True):
                                poison()
                                got = torch.ops.kiln.fused_matmul_reduce_scatter(
                                    a[self.rank], b[self.rank], "avg" if avg else "sum", 0,
                                    self.name)
                                want = ref[self.rank * q:(self.rank + 1) * q]
                                check_close(got, want / (self.world if avg else 1),
                                            f"RS {tag} avg={avg}")
                    plan = kiln.plan_of("rs", m, n, k, DTYPES[0], self.name)
                    if setting != "auto":
                        assert ("runs as the chunked ReduceScatter" in plan) == \
                            (setting == "chunked"), f"KILN_TORCH_RS_ALGORITHM={setting}: {plan}"
        finally:
            if saved is None:
                os.environ.pop("KILN_TORCH_RS_ALGORITHM", None)
            else:
                os.environ["KILN_TORCH_RS_ALGORITHM"] = saved
        odd = operand(7, (1000, 64), torch.bfloat16)
        b = weight(8, 64, 256, torch.bfloat16, "kn")
        expect_error(ValueError, "must be divisible by the group's world size 3",
                     lambda: torch.ops.kiln.fused_matmul_reduce_scatter(odd, b, "sum", 0,
                                                                        self.name),
                     "rows that do not split into 3")

    def reduce_scatter_3d_and_avg(self):
        dtype, k, n = torch.bfloat16, 128, 256
        for shape, dim, op in (((4, 256, k), 0, "sum"), ((2, 512, k), 1, "avg"),
                               ((2, 520, k), -2, "sum")):
            tag = ("rs3", shape, dim, op)
            a = self.all_operands(tag, shape, dtype)
            b = self.all_weights(tag, k, n, dtype, "kn")
            poison()
            got = torch.ops.kiln.fused_matmul_reduce_scatter(a[self.rank], b[self.rank], op, dim,
                                                             self.name)
            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
            if op == "avg":
                ref = ref / self.world
            expect = ref.chunk(self.world, dim=dim)[self.rank]
            check_close(got, expect, f"RS {tag}")

    def all_gather_matmul(self):
        k = 128
        for shape, dim in (((200, k), 0), ((2, 100, k), 1), ((3, 40, k), 0)):
            for dtype in DTYPES:
                for return_a in (True, False):
                    tag = ("ag", shape, dim, str(dtype), return_a)
                    shards = self.all_operands(tag, shape, dtype)
                    bs = [weight(11, k, 256, dtype, "kn"), weight(12, k, 64, dtype, "nk")]
                    poison()
                    gathered, outs = torch.ops.kiln.fused_all_gather_matmul(
                        shards[self.rank], bs, dim, self.name, return_A=return_a)
                    full = torch.cat(shards, dim=dim)
                    if return_a:
                        assert gathered is not None and torch.equal(gathered, full), f"AG {tag}: A"
                    else:
                        assert gathered is None, f"AG {tag}: A returned with return_A=False"
                    for i, b in enumerate(bs):
                        check_close(outs[i], full.float() @ b.float(), f"AG {tag} B[{i}]")

    def all_reduce(self):
        for m, n, k in ((1000, 512, 256), (256, 1024, 128)):
            for dtype in DTYPES:
                for layout in ("kn", "nk"):
                    tag = ("ar", m, n, k, str(dtype), layout)
                    a = self.all_operands(tag, (m, k), dtype)
                    b = self.all_weights(tag, k, n, dtype, layout)
                    poison()
                    got = torch.ops.kiln.matmul_all_reduce(a[self.rank], b[self.rank], self.name)
                    ref = sum(x.float() @ y.float() for x, y in zip(a, b))
                    check_close(got, ref, f"AR {tag}")
                    gamma = operand(7, (n,), dtype)
                    poison()
                    got = torch.ops.kiln.matmul_all_reduce_rmsnorm(a[self.rank], b[self.rank],
                                                                   gamma, 1e-5, self.name)
                    check_close(got, F.rms_norm(ref, (n,), gamma.float(), 1e-5), f"AR+RMSNorm {tag}")

    def opcheck(self):
        dtype, m, n, k = torch.bfloat16, 256, 256, 128
        a, b = operand(1, (m, k), dtype), weight(2, k, n, dtype, "kn")
        ops = torch.ops.kiln
        torch.library.opcheck(ops.matmul_all_reduce.default, (a, b, self.name))
        torch.library.opcheck(ops.matmul_all_reduce_rmsnorm.default,
                              (a, b, operand(3, (n,), dtype), 1e-5, self.name))
        torch.library.opcheck(ops.fused_matmul_reduce_scatter.default, (a, b, "sum", 0, self.name))
        torch.library.opcheck(ops.fused_all_gather_matmul.default, (a, [b], 0, self.name),
                              {"return_A": True})
        torch.library.opcheck(ops.fused_all_gather_matmul.default,
                              (a.view(2, m // 2, k), [b], 1, self.name), {"return_A": False})

    def compile(self):
        dtype, m, n, k = torch.bfloat16, 512, 256, 128
        a, b = operand(4, (m, k), dtype), weight(5, k, n, dtype, "nk")
        name = self.name

        def layer(x, w):
            y = torch.ops.kiln.matmul_all_reduce(x, w, name)
            z = torch.ops.kiln.fused_matmul_reduce_scatter(x, w, "sum", 0, name)
            return torch.relu(y) * 2, z + 1

        compiled = torch.compile(layer, fullgraph=True)
        for got, want in zip(compiled(a, b), layer(a, b)):
            check_close(got, want.float(), "torch.compile")

    def cuda_graph_refused(self):
        a, b = operand(6, (256, 128), torch.bfloat16), weight(7, 128, 256, torch.bfloat16, "kn")
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()

        def capture():
            with torch.cuda.graph(graph):
                torch.ops.kiln.matmul_all_reduce(a, b, self.name)

        expect_error(RuntimeError, "CUDA graph", capture, "capture")
        torch.cuda.synchronize()

    def bad_input(self):
        bf, name = torch.bfloat16, self.name
        a, b = operand(8, (256, 128), bf), weight(9, 128, 256, bf, "kn")
        ops = torch.ops.kiln
        expect_error(TypeError, "A must be bfloat16 or float16",
                     lambda: ops.matmul_all_reduce(a.float(), b, name), "float32 A")
        expect_error(TypeError, "B must have A's dtype",
                     lambda: ops.matmul_all_reduce(a, b.half(), name), "mixed dtypes")
        expect_error(ValueError, "K = 128",
                     lambda: ops.matmul_all_reduce(a, weight(9, 64, 256, bf, "kn"), name), "K")
        expect_error(ValueError, "CUDA device",
                     lambda: ops.matmul_all_reduce(a.cpu(), b.cpu(), name), "CPU tensors")
        expect_error(ValueError, "not registered",
                     lambda: ops.matmul_all_reduce(a, b, "no-such-group"), "unknown group")
        expect_error(ValueError, "reduce_op",
                     lambda: ops.fused_matmul_reduce_scatter(a, b, "max", 0, name), "reduce_op")
        expect_error(ValueError, "scatter_dim",
                     lambda: ops.fused_matmul_reduce_scatter(a, b, "sum", 1, name), "scatter_dim")
        expect_error(ValueError, "gather_dim",
                     lambda: ops.fused_all_gather_matmul(a, [b], 2, name), "gather_dim")
        expect_error(ValueError, "eps",
                     lambda: ops.matmul_all_reduce_rmsnorm(a, b, b[0], 0.0, name), "eps")
        expect_error(ValueError, "weight must be 1-D",
                     lambda: ops.matmul_all_reduce_rmsnorm(a, b, b[:, :8], 1e-5, name), "weight")
        expect_error(ValueError, "multiples of 8",
                     lambda: ops.matmul_all_reduce(a[:, :100], weight(9, 100, 256, bf, "kn"), name),
                     "K not a multiple of 8")
        if self.world > 1:
            odd = operand(10, (self.world * 64 + 1, 128), bf)
            expect_error(ValueError, "divisible by the group's world size",
                         lambda: ops.fused_matmul_reduce_scatter(odd, b, "sum", 0, name), "rows")
        # The group still works after the refusals (nothing half-started, no rank left waiting).
        ref = self.world * (a.float() @ b.float())
        check_close(ops.matmul_all_reduce(a, b, name), ref, "AR after bad input")

    def async_tp_hook(self):
        """torch.ops.symm_mem's fused ops, overridden, run kiln's (proved by kiln's own refusal of a
        last-dimension scatter, which PyTorch's kernel accepts), with the same results."""
        import kiln
        dtype, m, n, k = torch.bfloat16, 512, 256, 128
        tag = ("async-tp", m, n, k)
        a = self.all_operands(tag, (m, k), dtype)
        b = self.all_weights(tag, k, n, dtype, "nk")
        with kiln.use_for_async_tp():
            got = torch.ops.symm_mem.fused_matmul_reduce_scatter(a[self.rank], b[self.rank], "sum",
                                                                 0, self.name)
            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
            q = m // self.world
            check_close(got, ref[self.rank * q:(self.rank + 1) * q], "symm_mem RS through kiln")
            gathered, outs = torch.ops.symm_mem.fused_all_gather_matmul(a[self.rank], [b[0]], 0,
                                                                         self.name)
            full = torch.cat(a)
            assert torch.equal(gathered, full), "symm_mem AG through kiln: A"
            check_close(outs[0], full.float() @ b[0].float(), "symm_mem AG through kiln")
            expect_error(ValueError, "kiln::fused_matmul_reduce_scatter",
                         lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(
                             a[self.rank], b[self.rank], "sum", 1, self.name), "routed to kiln")

    def mixed_weight_layouts(self):
        """B's layout differs between ranks: rank 0 passes an N x K matrix's .t() view, rank 1 a
        contiguous K x N, and so on alternately; then every rank flips. No rank may hang or differ
        from the reference, and the object made at the first call runs rank 0's layout (nk) on
        every rank (the other layout is copied into it)."""
        import kiln
        dtype, m, n, k = torch.bfloat16, 768, 384, 192  # a shape no other case makes first
        for flip in (False, True):
            def layout_of(r):
                return "nk" if (r % 2 == 0) != flip else "kn"
            tag = ("mixed-layouts", m, n, k, flip)
            a = self.all_operands(tag, (m, k), dtype)
            b = [weight(zlib.crc32(repr((tag, "B", r)).encode()), k, n, dtype, layout_of(r))
                 for r in range(self.world)]
            mine = b[self.rank]
            assert mine.is_contiguous() == (layout_of(self.rank) == "kn"), "test setup: B's layout"
            ref = sum(x.float() @ y.float() for x, y in zip(a, b))
            poison()
            got = torch.ops.kiln.matmul_all_reduce(a[self.rank], mine, self.name)
            check_close(got, ref, f"AR {tag} with B {layout_of(self.rank)} here")
            poison()
            got = torch.ops.kiln.fused_matmul_reduce_scatter(a[self.rank], mine, "sum", 0,
                                                             self.name)
            q = m // self.world
            check_close(got, ref[self.rank * q:(self.rank + 1) * q],
                        f"RS {tag} with B {layout_of(self.rank)} here")
        for op in ("ar", "rs"):
            plan = kiln.plan_of(op, m, n, k, dtype, self.name, weight_kn=self.rank % 2 == 1)
            assert "| B nk" in plan, f"{op}: the cached object is not rank 0's nk: {plan}"

    def plan_failure_on_rank0(self):
        """Rank 0's plan lookup fails (its KILN_PLAN_CACHE names a file that is not JSON; only
        rank 0 looks up). Every rank raises ValueError with rank 0's reason, rather than waiting
        for rank 0's broadcast, and the same shape runs afterwards (nothing half-made cached)."""
        dtype, m, n, k = torch.bfloat16, 640, 256, 128  # a shape no other case makes
        tag = ("rank0-plan-failure", m, n, k)
        a = self.all_operands(tag, (m, k), dtype)
        b = self.all_weights(tag, k, n, dtype, "kn")
        name, rank = self.name, self.rank

        def call():
            return torch.ops.kiln.matmul_all_reduce(a[rank], b[rank], name)

        saved = os.environ.get("KILN_PLAN_CACHE")
        with tempfile.TemporaryDirectory() as tmp:
            if rank == 0:
                broken = os.path.join(tmp, "broken-plans.json")
                with open(broken, "w") as f:
                    f.write("{ this is not JSON")
                os.environ["KILN_PLAN_CACHE"] = broken
            try:
                expect_error(ValueError, "not valid JSON", call, "rank 0's unreadable plan cache")
                if self.world > 1:
                    expect_error(ValueError, "rank 0's lookup failed", call,
                                 "rank 0's unreadable plan cache, again")
            finally:
                if rank == 0:
                    if saved is None:
                        os.environ.pop("KILN_PLAN_CACHE", None)
                    else:
                        os.environ["KILN_PLAN_CACHE"] = saved
        ref = sum(x.float() @ y.float() for x, y in zip(a, b))
        check_close(call(), ref, "AR after rank 0's lookup failed")

    def release_and_reuse(self):
        """After kiln.release_group the ops refuse the group with a ValueError naming
        kiln.init_group; releasing again (release_group, release_all twice) does nothing; and
        kiln.init_group registers the group again."""
        import kiln
        bf, name, ops = torch.bfloat16, self.name, torch.ops.kiln
        a, b = operand(20, (256, 128), bf), weight(21, 128, 256, bf, "kn")
        torch.cuda.synchronize()
        kiln.release_group()
        assert not ops._has_group(name), "still registered after kiln.release_group()"
        for fragment in ("kiln.init_group", "released"):
            expect_error(ValueError, fragment, lambda: ops.matmul_all_reduce(a, b, name),
                         "AR on a released group")
        expect_error(ValueError, "kiln.init_group",
                     lambda: ops.fused_all_gather_matmul(a, [b], 0, name), "AG on a released group")
        expect_error(ValueError, "kiln.init_group",
                     lambda: kiln.plan_of("ar", 256, 256, 128, bf, name), "plan_of, released")
        kiln.release_group()
        kiln.release_group(name)
        kiln.release_all()
        kiln.release_all()
        assert kiln.init_group(timeout_s=120) == name
        check_close(ops.matmul_all_reduce(a, b, name), self.world * (a.float() @ b.float()),
                    "AR after init_group again")

    def first_call_keeps_the_random_stream(self):
        """Creating an op's state (here a tall ReduceScatter, whose two layouts are timed on random
        operands when several ranks run it) must not draw from PyTorch's random stream."""
        dtype, m, n, k = torch.bfloat16, self.world * 768, 256, 128  # a shape no other case makes
        tag = ("rng", m, n, k)
        a = self.all_operands(tag, (m, k), dtype)
        b = self.all_weights(tag, k, n, dtype, "nk")
        torch.cuda.manual_seed(7)
        expected = torch.randn(16, device="cuda")
        torch.cuda.manual_seed(7)
        got = torch.ops.kiln.fused_matmul_reduce_scatter(a[self.rank], b[self.rank], "sum", 0,
                                                         self.name)
        after = torch.randn(16, device="cuda")
        assert torch.equal(after, expected), "the op's first call drew from PyTorch's generator"
        ref = sum(x.float() @ y.float() for x, y in zip(a, b))
        q = m // self.world
        check_close(got, ref[self.rank * q:(self.rank + 1) * q], f"RS {tag}")

    def all(self):
        return [self.reduce_scatter_rows, self.reduce_scatter_algorithms,
                self.reduce_scatter_3d_and_avg, self.all_gather_matmul,
                self.all_reduce, self.bad_input, self.cuda_graph_refused, self.opcheck,
                self.compile, self.async_tp_hook, self.mixed_weight_layouts,
                self.plan_failure_on_rank0, self.release_and_reuse,
                self.first_call_keeps_the_random_stream, self.reduce_scatter_odd_world]

    def for_world(self):
        """The cases this world runs (a world of 3 only the ODD_WORLD ones)."""
        return [c for c in self.all() if self.world != 3 or c.__name__ in self.ODD_WORLD]


def main(rank, world, init_file, results):
    for var, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                       ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(var, value)
    torch.cuda.set_device(0)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    outcome = {}
    try:
        import kiln
        name = kiln.init_group(timeout_s=120)
        for case in Cases(rank, world, name).for_world():
            start = time.monotonic()
            try:
                case()
                outcome[case.__name__] = None
            except Exception:  # noqa: BLE001
                outcome[case.__name__] = traceback.format_exc()
            # Progress on stderr (pytest -s shows it live): a hung world names its last case.
            print(f"[rank {rank} of {world}] {case.__name__}: "
                  f"{'ok' if outcome[case.__name__] is None else 'FAILED'} "
                  f"in {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
        torch.cuda.synchronize()
        dist.barrier()
        kiln.release_group()
    except Exception:  # noqa: BLE001
        outcome["setup"] = traceback.format_exc()
    results.put((rank, outcome))
    dist.destroy_process_group()
