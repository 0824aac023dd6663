"""Check on a GPU the conditions the scanner relies on, and the kernels issue 35 asks records for.

    python benchmarks/scan_corpus/gpu_checks.py OUT.json            # every check, each group in a fresh process
    python benchmarks/scan_corpus/gpu_checks.py --group torch OUT    # one group (what the driver runs per mode)

Each check runs its computation RUNS times in one process and hashes the outputs (and gradients):
`distinct` is how many different results came out of RUNS (1: "0 of RUNS differed", never "deterministic").
Groups run in fresh processes: `torch` by default, `torch-det` under torch.use_deterministic_algorithms(True)
(with CUBLAS_WORKSPACE_CONFIG=:4096:8), `jax`. A check that cannot run (torchvision, torch_scatter or flax not
installed) is written with `skipped` and why. The driver writes ONE JSON file, committed as written.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import traceback

RUNS = 5


def _digest(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _repeat(fn) -> dict:
    """Run fn RUNS times; fn returns a list of numpy arrays. distinct hashes, max abs difference to run 0."""
    import numpy as np

    outs, hashes = [], []
    for _ in range(RUNS):
        got = [np.asarray(a) for a in fn()]
        outs.append(got)
        hashes.append(_digest(got))
    diff = max((float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
                for o in outs[1:] for a, b in zip(outs[0], o)), default=0.0)
    return {"runs": RUNS, "distinct": len(set(hashes)), "max_abs_diff": diff}


def _guard(name: str, fn, out: dict) -> None:
    try:
        out[name] = _repeat(fn)
    except ModuleNotFoundError as e:
        out[name] = {"skipped": f"{e.name} is not installed"}
    except Exception as e:  # noqa: BLE001 - a raise under the switch is a result
        out[name] = {"raised": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}


def torch_group(det: bool) -> dict:
    import torch
    import torch.nn.functional as F

    if det:
        torch.use_deterministic_algorithms(True)
    dev = "cuda"
    out: dict = {}
    g = torch.Generator(device=dev).manual_seed(0)

    def grad_of(fn, *shape, dtype=torch.float32):
        x = torch.randn(*shape, device=dev, generator=g, dtype=dtype).requires_grad_()

        def run():
            x.grad = None
            y = fn(x)
            y.backward(torch.ones_like(y))
            torch.cuda.synchronize()
            return [y.detach().cpu().numpy(), x.grad.cpu().numpy()]
        return run

    # global pooling: AdaptiveAvgPool2d(1) is a mean (no adaptive kernel); control: output 7 of 56x56 (overlap-free)
    # and output 24 of 50x50 (overlapping windows, the record's condition)
    _guard("adaptive_avg_pool2d_output_1", grad_of(torch.nn.AdaptiveAvgPool2d(1), 64, 256, 56, 56), out)
    _guard("adaptive_avg_pool2d_output_24_of_50_control", grad_of(lambda a: F.adaptive_avg_pool2d(a, 24), 64, 256, 50, 50), out)
    # global pooling in 1-D: AdaptiveAvgPool1d(1) (Swin's head, B x C x L) runs the 2-D op at output (1, 1), a mean;
    # control: output 24 of 50 (overlapping windows)
    _guard("adaptive_avg_pool1d_output_1", grad_of(torch.nn.AdaptiveAvgPool1d(1), 64, 768, 3136), out)
    _guard("adaptive_avg_pool1d_output_24_of_50_control", grad_of(lambda a: F.adaptive_avg_pool1d(a, 24), 64, 768, 50), out)
    # scatter of a tensor at top-k indices (distinct within each row: x-transformers' top-k filtering) vs at random
    # indices that repeat within rows (control)
    logits = torch.randn(256, 32000, device=dev, generator=g)
    top = logits.topk(64, dim=-1)
    _guard("scatter_src_at_topk_indices", lambda: [torch.full_like(logits, -1e9).scatter(1, top.indices, top.values).cpu().numpy()], out)
    rand_idx = torch.randint(0, 32000, (256, 4096), device=dev, generator=g)
    rand_val = torch.randn(256, 4096, device=dev, generator=g)
    _guard("scatter_src_random_indices_control", lambda: [torch.zeros_like(logits).scatter(1, rand_idx, rand_val).cpu().numpy()], out)
    # repeat_interleave with an int repeats vs a tensor of repeats (control)
    _guard("repeat_interleave_int", grad_of(lambda a: a.repeat_interleave(62500, dim=0), 64, 1), out)
    reps = torch.full((64,), 62500, device=dev)
    _guard("repeat_interleave_tensor_control", grad_of(lambda a: a.repeat_interleave(reps, dim=0), 64, 1), out)
    # cumsum of integer-valued floats and of a boolean mask as float32 vs random floats (control)
    ones = torch.ones(4_000_000, device=dev)
    _guard("cumsum_integer_valued_float", lambda: [ones.cumsum(0).cpu().numpy()], out)
    mask = torch.rand(64, 4096, 256, device=dev, generator=g) > 0.5
    _guard("cumsum_bool_mask_as_float32", lambda: [(~mask).cumsum(1, dtype=torch.float32).cpu().numpy()], out)
    _guard("cumsum_float_control", grad_of(lambda a: a.cumsum(0), 4_000_000), out)
    # scatter_add_ of ones (counts, exact below 2**24) vs random values (control), 4M updates into 64 slots
    idx = torch.randint(0, 64, (4_000_000,), device=dev, generator=g)
    one = torch.ones(4_000_000, device=dev)
    val = torch.randn(4_000_000, device=dev, generator=g) * 1000
    _guard("scatter_add_of_ones", lambda: [torch.zeros(64, device=dev).scatter_add_(0, idx, one).cpu().numpy()], out)
    _guard("scatter_add_random_control", lambda: [torch.zeros(64, device=dev).scatter_add_(0, idx, val).cpu().numpy()], out)
    # cuDNN RNNs: forward and backward of nn.LSTM / nn.GRU / nn.RNN on CUDA
    for cls in (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN):
        torch.manual_seed(0)
        rnn = cls(256, 512, num_layers=2, batch_first=True).to(dev)
        seq = torch.randn(64, 200, 256, device=dev, generator=g)

        def run_rnn(rnn=rnn, seq=seq):
            rnn.zero_grad()
            y, _ = rnn(seq)
            y.sum().backward()
            torch.cuda.synchronize()
            return [y.detach().cpu().numpy(), *(p.grad.cpu().numpy() for p in rnn.parameters())]
        _guard(f"cudnn_{cls.__name__.lower()}", run_rnn, out)
    # torchvision roi_align backward (atomicAdd into the input gradient where boxes overlap)
    def roi():
        from torchvision.ops import roi_align
        feat = torch.randn(8, 256, 64, 64, device=dev, generator=g).requires_grad_()
        boxes = torch.rand(2000, 4, device=dev, generator=g) * 48
        boxes[:, 2:] += boxes[:, :2] + 8
        rois = torch.cat([torch.randint(0, 8, (2000, 1), device=dev, generator=g).float(), boxes], 1)

        def run():
            feat.grad = None
            y = roi_align(feat, rois, output_size=7, spatial_scale=1.0, sampling_ratio=2, aligned=True)
            y.backward(torch.ones_like(y))
            torch.cuda.synchronize()
            return [y.detach().cpu().numpy(), feat.grad.cpu().numpy()]
        return run
    try:
        _guard("torchvision_roi_align", roi(), out)
    except ModuleNotFoundError as e:
        out["torchvision_roi_align"] = {"skipped": f"{e.name} is not installed"}

    # HKUDS/SSLRec's `t.sparse.sum(adj, dim=-1).to_dense()` (forty-ninth corpus; kb/scan/resolvers.py coalesced-input):
    # a COO tensor of 256K entries on 64 x 64 positions, uncoalesced; its torch.sparse.sum must come back coalesced
    # (a check that raises says it did not), and its to_dense is compared with the uncoalesced tensor's own.
    rows = torch.randint(0, 64, (2, 1 << 18), device=dev, generator=g)
    entries = torch.randn(1 << 18, device=dev, generator=g)
    uncoalesced = torch.sparse_coo_tensor(rows, entries, (64, 64))

    def summed_rows():
        total = torch.sparse.sum(uncoalesced, dim=-1)
        if uncoalesced.is_coalesced() or not total.is_coalesced():
            raise AssertionError(f"input coalesced {uncoalesced.is_coalesced()}, sum coalesced {total.is_coalesced()}")
        dense = total.to_dense()
        torch.cuda.synchronize()
        return [dense.cpu().numpy()]
    _guard("sparse_sum_dim_result_coalesced_to_dense", summed_rows, out)
    _guard("sparse_coo_uncoalesced_to_dense_control", lambda: [uncoalesced.to_dense().cpu().numpy()], out)

    # `nn.Embedding.from_pretrained(table, freeze=...)` (data/sources/pytorch/torch.embedding-backward.yaml's call
    # condition): 65,536 lookups of a 64-row table, so rows collide; freeze=False trains the table through the
    # embedding backward, freeze=True (the default) leaves it with requires_grad False and no backward to run.
    table = torch.randn(64, 256, device=dev, generator=g)
    lookups = torch.randint(0, 64, (1 << 16,), device=dev, generator=g)
    upstream = torch.randn(1 << 16, 256, device=dev, generator=g)

    def pretrained(freeze: bool):
        emb = torch.nn.Embedding.from_pretrained(table.clone(), freeze=freeze)

        def run():
            out = emb(lookups)
            if freeze:
                if out.requires_grad or emb.weight.requires_grad:
                    raise AssertionError("a frozen table's lookup requires a gradient")
                return [out.cpu().numpy()]
            emb.weight.grad = None
            (out * upstream).sum().backward()
            torch.cuda.synchronize()
            return [emb.weight.grad.cpu().numpy()]
        return run
    _guard("embedding_from_pretrained_freeze_false_grad", pretrained(False), out)
    _guard("embedding_from_pretrained_freeze_true_no_grad", pretrained(True), out)

    def scat():
        import torch_scatter
        return lambda: [torch_scatter.scatter(val, idx, dim=0, dim_size=64, reduce="sum").cpu().numpy()]
    try:
        _guard("torch_scatter_sum", scat(), out)
    except ModuleNotFoundError as e:
        out["torch_scatter_sum"] = {"skipped": f"{e.name} is not installed"}
    return out


def jax_group() -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    out: dict = {}
    rng = np.random.default_rng(0)
    n = 4_000_000
    ids = jnp.asarray(rng.integers(0, 64, n).astype(np.int32))
    vals = jnp.asarray((rng.standard_normal(n) * 1000).astype(np.float32))
    # .at[].set with repeated indices: which of the writes to one slot wins, run to run
    setter = jax.jit(lambda v, i: jnp.zeros(64, jnp.float32).at[i].set(v))
    _guard("jax_at_set_repeated_indices", lambda: [np.asarray(setter(vals, ids))], out)
    # x[idx] gather: its gradient is a scatter-add into x
    x = jnp.asarray(rng.standard_normal(64).astype(np.float32))
    gather_grad = jax.jit(jax.grad(lambda a, i, v: jnp.sum(a[i] * v)))
    _guard("jax_index_gather_grad", lambda: [np.asarray(gather_grad(x, ids, vals))], out)
    # x @ w: a cuBLAS GEMM on the GPU (forward and weight gradient)
    a = jnp.asarray(rng.standard_normal((4096, 4096)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((4096, 4096)).astype(np.float32))
    mm = jax.jit(jax.value_and_grad(lambda p, q: jnp.sum(jnp.tanh(p @ q)), argnums=1))
    _guard("jax_matmul_operator_grad", lambda: [np.asarray(t) for t in mm(a, w)], out)
    # jax.jit(..., backend='cpu'): the same gather gradient on the CPU backend
    try:
        cpu_grad = jax.jit(jax.grad(lambda a, i, v: jnp.sum(a[i] * v)), backend="cpu")
        _guard("jax_index_gather_grad_backend_cpu", lambda: [np.asarray(cpu_grad(x, ids, vals))], out)
    except Exception as e:  # noqa: BLE001
        out["jax_index_gather_grad_backend_cpu"] = {"raised": f"{type(e).__name__}: {e}"[:300]}

    def flax_dense():
        import flax.linen as nn
        model = nn.Dense(4096)
        params = model.init(jax.random.PRNGKey(0), a)
        g = jax.jit(jax.grad(lambda p: jnp.sum(jnp.tanh(model.apply(p, a)))))
        return lambda: [np.asarray(t) for t in jax.tree_util.tree_leaves(g(params))]
    try:
        _guard("flax_linen_dense_grad", flax_dense(), out)
    except ModuleNotFoundError as e:
        out["flax_linen_dense_grad"] = {"skipped": f"{e.name} is not installed"}
    return out


def environment() -> dict:
    env: dict = {"python": platform.python_version(), "machine": platform.machine()}
    try:
        import torch
        env.update(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                   gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
    except Exception as e:  # noqa: BLE001
        env["torch"] = f"unavailable: {e}"
    for mod in ("torchvision", "torch_scatter", "jax", "jaxlib", "flax"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            env[mod] = None
    return env


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--group":
        group, path = sys.argv[2], sys.argv[3]
        try:
            result = {"torch": lambda: torch_group(False), "torch-det": lambda: torch_group(True), "jax": jax_group}[group]()
        except Exception:  # noqa: BLE001
            result = {"error": traceback.format_exc()[-2000:]}
        with open(path, "w") as handle:
            json.dump(result, handle)
        return 0
    out_path = sys.argv[1]
    doc = {"kind": "scan-gpu-checks", "script": "benchmarks/scan_corpus/gpu_checks.py",
           "started": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "runs_per_check": RUNS, "environment": environment(), "modes": {}}
    for group, extra in (("torch", {}), ("torch-det", {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}), ("jax", {})):
        tmp = f"{out_path}.{group}.part"
        done = subprocess.run([sys.executable, __file__, "--group", group, tmp], env={**os.environ, **extra},
                              capture_output=True, text=True, timeout=400)
        try:
            with open(tmp) as handle:
                doc["modes"][group] = json.load(handle)
            os.remove(tmp)
        except OSError:
            doc["modes"][group] = {"error": (done.stderr or done.stdout)[-2000:]}
    doc["finished"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(out_path, "w") as handle:
        json.dump(doc, handle, indent=1, sort_keys=True)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
