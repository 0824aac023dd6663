"""Empty buffers a collective fills, called through a module that re-exports torch.distributed (kb/scan/resolvers.py,
written-before-read): huggingface/nanotron (forty-sixth corpus, 11 false alarms) imports `from nanotron import
distributed as dist` and gathers into `list(torch.split(out, sizes))` or `all_gather_into_tensor(out, x)`. A buffer a
function of another name receives keeps its finding."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_buffers_filled_through_a_reexporting_module(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"nano/__init__.py": "", "nano/distributed.py": """\
        from torch.distributed import *  # noqa: F403
        import torch.distributed as _dist
        all_gather = _dist.all_gather
        """, "nano/sampler.py": """\
        import torch
        from nano import distributed as dist
        from nano import comm
        def all_gather_batches(in_tensor, in_split, group):
            out_tensor = torch.empty((sum(in_split),) + in_tensor.shape[1:], dtype=in_tensor.dtype, device="cuda")
            out_split_list = list(torch.split(out_tensor, in_split, dim=0))
            dist.all_gather(out_split_list, in_tensor, group=group)
            return out_tensor
        def gathered(x, group):
            full = torch.empty(x.shape[0] * 2, *x.shape[1:], dtype=x.dtype, device="cuda")
            dist.all_gather_into_tensor(full, x, group=group)
            return full
        def received(x):
            buf = torch.empty_like(x)
            comm.fetch(buf)
            return buf
        """, "nano/comm.py": "def fetch(t):\n    return t\n"}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [14], found


def test_collectives_a_module_re_exports_by_a_star_import(tmp_path: Path) -> None:
    """nanotron's `distributed.py` says `from torch.distributed import *` and defines its own `all_gather_into_tensor`;
    `from nanotron import distributed as dist; dist.all_reduce(grad)` is torch's all-reduce (forty-sixth corpus, 17
    risky entries missed), the module's own wrapper is not torch's function."""
    found = scan_files(tmp_path, {"nano/__init__.py": "", "nano/distributed.py": """\
        import torch
        from torch import distributed as _dist
        from torch.distributed import *  # noqa: F403
        def all_gather_into_tensor(output, tensor, group=None):
            return _dist.all_gather_into_tensor(output, tensor, group=group)
        """, "nano/trainer.py": """\
        import torch
        from nano import distributed as dist
        def step(model, group):
            loss = model(torch.randn(4, 4, device="cuda")).sum()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad, group=group)
            return dist.all_gather_into_tensor(torch.empty(8, device="cuda"), loss.reshape(1))
        """, "train.py": "from nano.trainer import step\n"}, "torch=2.11")
    nvls = sorted((Path(f.path).name, f.line) for f in found if f.record == "torch.distributed-nvls")
    assert ("trainer.py", 7) in nvls and not any(name == "trainer.py" and line == 8 for name, line in nvls), found
