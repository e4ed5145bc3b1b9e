#!/usr/bin/env python3
"""PyTorch eager timings for KernelBench level 1 (single-GPU problems, convolutions excluded).

The baseline for kiln's own suite: one row per problem `kb1-<id>-<slug>`, fp32, with the
shapes and forward semantics of KernelBench level 1 (repository ScalingIntelligence/KernelBench,
folder KernelBench/level1, commit 423217d9). Each forward below is written here from that
specification; no code is copied from the repository.

Run on the GPU machine (torch with CUDA):
    python3 scripts/kb1_torch_eager.py --size kb --json out.json
    python3 scripts/kb1_torch_eager.py --problems 'kb1-1-*' 'kb1-9?-*' --size small --flush-l2
    python3 scripts/kb1_torch_eager.py --list            # names and shapes; needs no torch

As KernelBench does: the model is built as Model(*get_init_inputs()).cuda() (default training
mode, so BatchNorm2d uses batch statistics and updates its running stats), the forward runs
under torch.no_grad(), and each timed iteration is: start event, forward, end event,
synchronize. Inputs follow get_inputs() (torch.rand fp32, bool masks, int64 class targets,
...) but are drawn directly on the GPU (same distributions, a different random stream).
Presets: `kb` = KernelBench's sizes; `small` = every dimension >= 1024 divided by 16, from 256
to 1023 divided by 4, smaller ones unchanged, problem 8 (irregular shapes) unchanged. The shapes used are written to the JSON.
"""
import argparse
import fnmatch
import gc
import json
import math
import os
import sys

torch = F = nn = None  # imported lazily by _import_torch(), so --help/--list need no torch

PROBLEMS = {}  # id -> dict(name, dims, params, inputs, fwd, mods)


def _p(pid, slug, dims, inputs, fwd, params=None, mods=None):
    """dims: named sizes (scaled by `small`); params: fixed values (kernel sizes, dims, eps, ...).
    inputs: 'name:d1,d2[:kind] ...' in forward order; kind defaults to rand (see _make_input)."""
    PROBLEMS[pid] = dict(id=pid, name=f"kb1-{pid}-{slug}", dims=dims, params=params or {},
                         inputs=inputs, fwd=fwd, mods=mods)


MM = lambda m, A, B: torch.matmul(A, B)
EW = lambda: dict(batch_size=4096, dim=393216)                      # problems 19-32
NCHW = lambda: dict(batch_size=112, features=64, dim1=512, dim2=512)  # problems 34-37
RED = lambda: dict(batch_size=128, dim1=4096, dim2=4095)             # problems 47-53
SQ = lambda: dict(batch_size=32768, n=32768)                         # problems 89-96, 100
X2, X4, X3 = "x:batch_size,dim", "x:batch_size,features,dim1,dim2", "x:batch_size,dim1,dim2"
XS = "x:batch_size,n"
D1 = dict(dim=1)

_p(1, "square-matmul", dict(N=4096), "A:N,N B:N,N", MM)
_p(2, "matmul", dict(M=2048, K=8192, N=4096), "A:M,K B:K,N", MM)
_p(3, "batched-matmul", dict(batch_size=128, m=512, k=1024, n=2048),
   "A:batch_size,m,k B:batch_size,k,n", lambda m, A, B: torch.bmm(A, B))
_p(4, "matvec", dict(M=2048, K=1048576), "A:M,K B:K,1", MM)
_p(5, "matrix-scalar", dict(M=65536, N=16384), "A:M,N s::scalar", lambda m, A, s: A * s,
   params=dict(s=3.14))
_p(6, "matmul-large-k", dict(M=256, N=256, K=524288), "A:M,K B:K,N", MM)
_p(7, "matmul-small-k", dict(M=32768, N=32768, K=64), "A:M,K B:K,N", MM)
_p(8, "matmul-irregular", dict(M=8205, K=2949, N=5921), "A:M,K B:K,N", MM)
_p(9, "tall-skinny-matmul", dict(M=32768, N=32), "A:M,N B:N,M", MM)
_p(10, "3d-tensor-matmul", dict(N=16, M=1024, K=2048, L=768), "A:N,M,K B:K,L", MM)
_p(11, "4d-tensor-matmul", dict(b=8, i=256, j=512, l=256, k=768), "A:b,i,j,l B:l,k",
   lambda m, A, B: torch.einsum("bijl,lk->bijk", A, B))
_p(12, "diag-matmul", dict(M=4096, N=4096), "A:N B:N,M", lambda m, A, B: A.unsqueeze(1) * B)
_p(13, "symmetric-matmul", dict(N=4096), "A:N,N:sym B:N,N:sym", MM)
_p(14, "upper-triangular-matmul", dict(N=4096), "A:N,N:triu B:N,N:triu",
   lambda m, A, B: torch.triu(torch.matmul(A, B)))
_p(15, "lower-triangular-matmul", dict(M=4096), "A:M,M:tril B:M,M:tril",
   lambda m, A, B: torch.tril(torch.matmul(A, B)))
_p(16, "matmul-transposed-a", dict(M=2048, K=8192, N=4096), "A:K,M B:K,N",
   lambda m, A, B: torch.matmul(A.T, B))
_p(17, "matmul-transposed-b", dict(M=2048, K=8192, N=4096), "A:M,K B:N,K",
   lambda m, A, B: torch.matmul(A, B.T))
_p(18, "matmul-transposed-both", dict(M=2048, K=8192, N=4096), "A:K,M B:N,K",
   lambda m, A, B: torch.matmul(A.T, B.T))
_p(19, "relu", EW(), X2, lambda m, x: torch.relu(x))
_p(20, "leaky-relu", EW(), X2, lambda m, x: F.leaky_relu(x, negative_slope=m.p["negative_slope"]),
   params=dict(negative_slope=0.01))
_p(21, "sigmoid", EW(), X2, lambda m, x: torch.sigmoid(x))
_p(22, "tanh", EW(), X2, lambda m, x: torch.tanh(x))
_p(23, "softmax", EW(), X2, lambda m, x: torch.softmax(x, dim=1))
_p(24, "log-softmax", EW(), X2, lambda m, x: torch.log_softmax(x, dim=m.p["dim"]), params=D1)
_p(25, "swish", EW(), X2, lambda m, x: x * torch.sigmoid(x))
_p(26, "gelu", EW(), X2, lambda m, x: F.gelu(x))
_p(27, "selu", EW(), X2, lambda m, x: torch.selu(x))
_p(28, "hardsigmoid", EW(), X2, lambda m, x: F.hardsigmoid(x))
_p(29, "softplus", EW(), X2, lambda m, x: F.softplus(x))
_p(30, "softsign", EW(), X2, lambda m, x: x / (1 + torch.abs(x)))
_p(31, "elu", EW(), X2, lambda m, x: F.elu(x, alpha=m.p["alpha"]), params=dict(alpha=1.0))
_p(32, "hardtanh", EW(), X2, lambda m, x: F.hardtanh(x, min_val=-1.0, max_val=1.0))
_p(33, "batchnorm", dict(batch_size=64, features=64, dim1=512, dim2=512), X4,
   lambda m, x: m.bn(x), mods=lambda d, p: dict(bn=nn.BatchNorm2d(num_features=d["features"])))
_p(34, "instancenorm", NCHW(), X4, lambda m, x: m.inorm(x),
   mods=lambda d, p: dict(inorm=nn.InstanceNorm2d(num_features=d["features"])))
_p(35, "groupnorm", NCHW(), X4, lambda m, x: m.gn(x), params=dict(num_groups=8),
   mods=lambda d, p: dict(gn=nn.GroupNorm(num_groups=p["num_groups"], num_channels=d["features"])))
_p(36, "rmsnorm", NCHW(), X4,
   lambda m, x: x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + m.p["eps"]),
   params=dict(eps=1e-5))
_p(37, "frobenius-norm", NCHW(), X4, lambda m, x: x / torch.norm(x, p="fro"))
_p(38, "l1-norm", dict(batch_size=32768, dim=65535), X2,
   lambda m, x: x / torch.mean(torch.abs(x), dim=1, keepdim=True))
_p(39, "l2-norm", dict(batch_size=32768, dim=65535), X2,
   lambda m, x: x / torch.norm(x, p=2, dim=1, keepdim=True))
_p(40, "layernorm", dict(batch_size=16, features=64, dim1=256, dim2=256), X4, lambda m, x: m.ln(x),
   mods=lambda d, p: dict(ln=nn.LayerNorm(normalized_shape=(d["features"], d["dim1"], d["dim2"]))))
POOL = lambda m, x: m.pool(x)
_p(41, "maxpool-1d", dict(batch_size=64, features=192, sequence_length=65536),
   "x:batch_size,features,sequence_length", POOL,
   params=dict(kernel_size=8, stride=1, padding=4, dilation=3, return_indices=False),
   mods=lambda d, p: dict(pool=nn.MaxPool1d(**p)))
_p(42, "maxpool-2d", dict(batch_size=32, channels=64, height=512, width=512),
   "x:batch_size,channels,height,width", POOL,
   params=dict(kernel_size=4, stride=1, padding=1, dilation=1),
   mods=lambda d, p: dict(pool=nn.MaxPool2d(**p)))
_p(43, "maxpool-3d", dict(batch_size=16, channels=32, dim1=128, dim2=128, dim3=128),
   "x:batch_size,channels,dim1,dim2,dim3", POOL,
   params=dict(kernel_size=3, stride=2, padding=1, dilation=3, return_indices=False,
               ceil_mode=False),
   mods=lambda d, p: dict(pool=nn.MaxPool3d(**p)))
_p(44, "avgpool-1d", dict(batch_size=64, in_channels=128, input_length=65536),
   "x:batch_size,in_channels,input_length", POOL, params=dict(kernel_size=8, stride=1, padding=4),
   mods=lambda d, p: dict(pool=nn.AvgPool1d(**p)))
_p(45, "avgpool-2d", dict(batch_size=16, channels=64, height=2048, width=2048),
   "x:batch_size,channels,height,width", POOL, params=dict(kernel_size=11),  # stride=None
   mods=lambda d, p: dict(pool=nn.AvgPool2d(**p)))
_p(46, "avgpool-3d", dict(batch_size=16, channels=32, depth=128, height=128, width=256),
   "x:batch_size,channels,depth,height,width", POOL, params=dict(kernel_size=3, stride=2, padding=1),
   mods=lambda d, p: dict(pool=nn.AvgPool3d(**p)))
_p(47, "sum-reduction", RED(), X3, lambda m, x: torch.sum(x, dim=m.p["dim"], keepdim=True),
   params=D1)
_p(48, "mean-reduction", RED(), X3, lambda m, x: torch.mean(x, dim=m.p["dim"]), params=D1)
_p(49, "max-reduction", RED(), X3, lambda m, x: torch.max(x, dim=m.p["dim"])[0], params=D1)
_p(51, "argmax", RED(), X3, lambda m, x: torch.argmax(x, dim=m.p["dim"]), params=D1)
_p(52, "argmin", RED(), X3, lambda m, x: torch.argmin(x, dim=m.p["dim"]), params=D1)
_p(53, "min-reduction", RED(), X3, lambda m, x: torch.min(x, dim=m.p["dim"])[0], params=D1)
_p(88, "mingpt-new-gelu", dict(batch_size=8192, dim=8192), X2,
   lambda m, x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                            * (x + 0.044715 * torch.pow(x, 3.0)))))
_p(89, "cumsum", SQ(), XS, lambda m, x: torch.cumsum(x, dim=m.p["dim"]), params=D1)
_p(90, "cumprod", SQ(), XS, lambda m, x: torch.cumprod(x, dim=m.p["dim"]), params=D1)
_p(91, "cumsum-reverse", SQ(), XS,
   lambda m, x: torch.cumsum(x.flip(m.p["dim"]), dim=m.p["dim"]).flip(m.p["dim"]), params=D1)


def _cumsum_exclusive(m, x):
    d = m.p["dim"]
    head = torch.zeros_like(x.select(d, 0).unsqueeze(d))
    return torch.cat((head, torch.cumsum(x.narrow(dim=d, start=0, length=x.size(d) - 1), dim=d)),
                     dim=d)


_p(92, "cumsum-exclusive", SQ(), XS, _cumsum_exclusive, params=D1)
_p(93, "masked-cumsum", SQ(), "x:batch_size,n mask:batch_size,n:mask",
   lambda m, x, mask: torch.cumsum(x * mask, dim=m.p["dim"]), params=D1)
_p(94, "mse-loss", SQ(), "predictions:batch_size,n:scaled targets:batch_size,n",
   lambda m, p, t: torch.mean((p - t) ** 2))
_p(95, "cross-entropy-loss", dict(batch_size=32768, num_classes=4096),
   "predictions:batch_size,num_classes targets:batch_size:classes",
   lambda m, p, t: F.cross_entropy(p, t))
_p(96, "huber-loss", SQ(), "predictions:batch_size,n:scaled targets:batch_size,n",
   lambda m, p, t: F.smooth_l1_loss(p, t))
_p(97, "sdpa", dict(batch_size=32, num_heads=32, sequence_length=512, embedding_dimension=1024),
   " ".join(f"{q}:batch_size,num_heads,sequence_length,embedding_dimension" for q in "QKV"),
   lambda m, Q, K, V: F.scaled_dot_product_attention(Q, K, V))
_p(98, "kl-div-loss", dict(batch_size=16384, n=16384),
   "predictions:batch_size,n:scaled_softmax targets:batch_size,n:softmax",
   lambda m, p, t: F.kl_div(torch.log(p), t, reduction="batchmean"))
_p(99, "triplet-margin-loss", dict(batch_size=32768, n=8192),
   "anchor:batch_size,n:scaled positive:batch_size,n negative:batch_size,n",
   lambda m, a, p, n: m.loss_fn(a, p, n), params=dict(margin=1.0),
   mods=lambda d, p: dict(loss_fn=nn.TripletMarginLoss(margin=p["margin"])))
_p(100, "hinge-loss", SQ(), "predictions:batch_size,n targets:batch_size:sign",
   lambda m, p, t: torch.mean(torch.clamp(1 - p * t, min=0)))  # t broadcasts over the last dim

# `small` (kiln's problems use the same rule): dims >= 1024 divided by 16, dims from 256 to
# 1023 divided by 4, smaller ones kept; problem 8's irregular shape kept whole.
SMALL_DIV, SMALL_MIN, SMALL_KEEP = 16, 1024, {8}
SMALL_MID_DIV, SMALL_MID_MIN = 4, 256


def dims_for(prob, size):
    """The named dimensions of a problem for a size preset."""
    d = dict(prob["dims"])
    if size == "small" and prob["id"] not in SMALL_KEEP:
        d = {k: (v // SMALL_DIV if v >= SMALL_MIN else
                 v // SMALL_MID_DIV if v >= SMALL_MID_MIN else v) for k, v in d.items()}
    return d


def input_specs(prob, dims):
    """[(name, shape tuple, kind)] in forward order; computed without torch."""
    out = []
    for tok in prob["inputs"].split():
        name, shape, kind = (tok.split(":") + ["rand"])[:3]
        shp = tuple(int(s) if s.isdigit() else dims[s] for s in shape.split(",")) if shape else ()
        out.append((name, shp, kind or "rand"))
    return out


def shape_summary(prob, dims):
    return " ".join(f"{name}={prob['params'][name]}" if kind == "scalar"
                    else f"{name}=" + "x".join(map(str, shp))
                    for name, shp, kind in input_specs(prob, dims))


def _import_torch():
    global torch, F, nn
    import torch as _torch
    import torch.nn as _nn
    import torch.nn.functional as _F
    torch, F, nn = _torch, _F, _nn


def _make_input(prob, dims, shape, kind, name, dev):
    """One input as get_inputs() makes it (drawn on the GPU)."""
    if kind == "scalar":
        return prob["params"][name]
    if kind == "mask":
        return torch.randint(0, 2, shape, dtype=torch.uint8, device=dev).bool()
    if kind == "classes":
        return torch.randint(0, dims["num_classes"], shape, dtype=torch.int64, device=dev)
    if kind == "sign":
        return torch.randint(0, 2, shape, device=dev).float() * 2 - 1
    x = torch.rand(shape, dtype=torch.float32, device=dev)
    if kind == "sym":
        return (x + x.T) / 2
    if kind in ("triu", "tril"):
        return getattr(torch, kind)(x)
    if kind in ("scaled", "scaled_softmax"):
        x.mul_(torch.rand((), device=dev))
    if kind.endswith("softmax"):
        return x.softmax(dim=-1)
    if kind not in ("rand", "scaled"):
        raise ValueError(f"unknown input kind {kind!r}")
    return x


def _build_model(prob, dims):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.p, self.fn = dict(prob["params"]), prob["fwd"]
            for k, mod in (prob["mods"](dims, self.p) if prob["mods"] else {}).items():
                setattr(self, k, mod)

        def forward(self, *args):
            return self.fn(self, *args)

    return Model()


def _pct(s, q):  # linear interpolation between order statistics (numpy's default)
    k = (len(s) - 1) * q
    f = int(math.floor(k))
    return s[f] + (s[min(f + 1, len(s) - 1)] - s[f]) * (k - f)


def _stats(times):
    s = sorted(times)
    return dict(median=_pct(s, 0.5), q25=_pct(s, 0.25), q75=_pct(s, 0.75), min=s[0], max=s[-1],
                mean=sum(s) / len(s), count=len(s))


def _clock_mhz():
    try:  # torch.cuda.clock_rate needs pynvml (or amdsmi); absent in some builds
        return torch.cuda.clock_rate(torch.cuda.current_device())
    except Exception:
        return None


def run_problem(prob, size, args, flush_buf, dev="cuda"):
    dims = dims_for(prob, size)
    torch.manual_seed(args.seed)
    specs = input_specs(prob, dims)
    inputs = [_make_input(prob, dims, shp, kind, name, dev) for name, shp, kind in specs]
    shapes = dict(dims=dims, params={k: v for k, v in prob["params"].items()}, inputs={
        name: ({"value": x, "dtype": type(x).__name__} if not torch.is_tensor(x)
               else {"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")})
        for (name, _, _), x in zip(specs, inputs)})
    model = _build_model(prob, dims).cuda()  # default training mode, as KernelBench
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    torch.cuda.synchronize()
    clock_before = _clock_mhz()
    with torch.no_grad():
        for _ in range(args.warmup):
            model(*inputs)
        torch.cuda.synchronize()
        for _ in range(args.iters):
            if flush_buf is not None:
                flush_buf.zero_()  # evict L2, outside the timed region
                torch.cuda.synchronize()
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
    clock_after = _clock_mhz()
    return dict(problem=prob["name"], size=size, shapes=shapes, torch_us=_stats(times),
                torch=torch.__version__, device=torch.cuda.get_device_name(),
                sm_clock_mhz=dict(before=clock_before, after=clock_after))


def _write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description="PyTorch eager timings for KernelBench level 1 (fp32, convolutions excluded).",
        epilog="Example: python3 scripts/kb1_torch_eager.py --size kb --json out.json")
    ap.add_argument("--problems", nargs="+", metavar="GLOB", default=["*"],
                    help="fnmatch patterns on problem names, e.g. 'kb1-1-*' (default: all)")
    ap.add_argument("--size", choices=["kb", "small"], default="kb",
                    help="kb: KernelBench sizes; small: dims >= 1024 divided by 16, 256-1023 by 4 "
                         "(default kb)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed forwards (0..100000, default 10)")
    ap.add_argument("--iters", type=int, default=50, help="timed forwards (1..100000, default 50)")
    ap.add_argument("--seed", type=int, default=42, help="torch.manual_seed (0..2**32-1, default 42)")
    ap.add_argument("--flush-l2", action="store_true",
                    help="zero a 256 MiB buffer before each timed iteration (outside the timing)")
    ap.add_argument("--json", metavar="PATH", help="write the results to PATH")
    ap.add_argument("--list", action="store_true",
                    help="print the selected names and their shapes for --size, then exit (no torch)")
    args = ap.parse_args(argv)
    for opt, val, lo, hi in (("--warmup", args.warmup, 0, 100000), ("--iters", args.iters, 1, 100000),
                             ("--seed", args.seed, 0, 2 ** 32 - 1)):
        if not lo <= val <= hi:
            ap.error(f"argument {opt}: must be in [{lo}, {hi}], got {val}")
    names = [p["name"] for p in PROBLEMS.values()]
    selected = set()
    for pat in args.problems:
        hit = [n for n in names if fnmatch.fnmatchcase(n, pat)]
        if not hit:
            ap.error(f"argument --problems: pattern {pat!r} matches no problem "
                     f"(names are kb1-<id>-<slug>; see --list)")
        selected.update(hit)
    args.selected = [p for p in PROBLEMS.values() if p["name"] in selected]
    if args.json:
        parent = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(parent):
            ap.error(f"argument --json: directory {parent!r} does not exist")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        for p in args.selected:
            d = dims_for(p, args.size)
            dims = " ".join(f"{k}={v}" for k, v in d.items())
            params = " ".join(f"{k}={v}" for k, v in p["params"].items())
            print(f"{p['name']:<32} {shape_summary(p, d)}\n{'':<32} dims: {dims}"
                  + (f"  params: {params}" if params else ""))
        print(f"{len(args.selected)} problems, size {args.size}")
        return 0
    _import_torch()
    if not torch.cuda.is_available():
        print("error: torch.cuda.is_available() is False; this script times on a CUDA GPU",
              file=sys.stderr)
        return 2
    try:
        prec = torch.get_float32_matmul_precision()
    except Exception:
        prec = None
    doc = dict(torch=torch.__version__, device=torch.cuda.get_device_name(), size=args.size,
               warmup=args.warmup, iters=args.iters, flush_l2=args.flush_l2, seed=args.seed,
               float32_matmul_precision=prec, rows=[])
    print(f"# torch {doc['torch']} on {doc['device']}, size {args.size}, warmup {args.warmup}, "
          f"iters {args.iters}, flush_l2 {args.flush_l2}", flush=True)
    flush_buf = (torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
                 if args.flush_l2 else None)
    failed = 0
    for p in args.selected:
        summary = shape_summary(p, dims_for(p, args.size))
        try:
            row = run_problem(p, args.size, args, flush_buf)
            print(f"{p['name']:<32} {summary:<56} median {row['torch_us']['median']:12.1f} us",
                  flush=True)
        except Exception as e:  # e.g. torch.OutOfMemoryError: record it and go on
            failed += 1
            row = dict(problem=p["name"], size=args.size, error=str(e), error_type=type(e).__name__)
            first = (str(e).splitlines() or [""])[0]
            print(f"{p['name']:<32} {summary:<56} ERROR {type(e).__name__}: {first}", flush=True)
        doc["rows"].append(row)
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        if args.json:
            _write_json(args.json, doc)
    print(f"# {len(doc['rows']) - failed} timed, {failed} failed"
          + (f"; wrote {args.json}" if args.json else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
