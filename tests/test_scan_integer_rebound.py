"""An integer tensor made from a count just before it is summed across processes (kb/scan/reaching.py,
dominating_value; kb/scan/values.py, integer): karpathy/build-nanogpt's HellaSwag counts (forty-third corpus, 2
false alarms), `num_total = torch.tensor(num_total, dtype=torch.long)` inside `if ddp:` in the training loop,
then `dist.all_reduce(num_total)`. RULES P4-1: a sum of integers is exact in any order."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_the_binding_every_path_passes_last_decides_the_dtype(tmp_path: Path) -> None:
    """The name is a Python count before and a Python number after; the all-reduce between sees the long tensor.
    A float tensor summed the same way, a name that a loop around the use rebinds after it, and a binding in a
    branch that the use's block does not hold keep their findings."""
    found = scan_files(tmp_path, {"train.py": """\
        import torch
        import torch.distributed as dist
        device = "cuda"
        ddp = len(__import__("sys").argv) > 1
        for step in range(10):
            num_total = 0
            for i in range(5):
                num_total += 1
            if ddp:
                num_total = torch.tensor(num_total, dtype=torch.long, device=device)
                dist.all_reduce(num_total, op=dist.ReduceOp.SUM)
                num_total = num_total.item()
            loss = torch.tensor(0.5, device=device)
            dist.all_reduce(loss)
            count = torch.tensor(3, dtype=torch.long, device=device)
            for k in range(3):
                dist.all_reduce(count)
                count = count.float() / 2
            if ddp:
                mixed = torch.tensor(1, dtype=torch.long, device=device)
            else:
                mixed = torch.tensor(1.5, device=device)
            dist.all_reduce(mixed)
        """}, "torch=2.11")
    nvls = sorted(f.line for f in found if f.record == "torch.distributed-nvls")
    assert nvls == [14, 17, 23], found


def test_a_float_tensor_rebound_through_views_stays_float(tmp_path: Path) -> None:
    """x-transformers' reverse cumsum and mamba's all-reduce helper (twenty-third, fortieth corpora): `g = g.flip(...)`,
    `g = g.cumsum(-1)`, and `x = x.contiguous()` before `all_reduce(x)`, where what the name held first is a float
    tensor or a parameter. The binding before the use is the name itself through a view: it is no integer."""
    found = scan_files(tmp_path, {"model.py": """\
        import torch
        import torch.nn.functional as F
        import torch.distributed as dist
        def gates(x, scale):
            g = F.logsigmoid(x) * scale
            g = g.flip(dims=(-1,))
            g = g.cumsum(dim=-1)
            return g.flip(dims=(-1,))
        def all_reduce_raw(input_, group):
            input_ = input_.contiguous()
            dist.all_reduce(input_, group=group)
            return input_
        """}, "torch=2.11")
    assert sorted((f.record, f.line) for f in found if f.record in ("torch.cumsum", "torch.distributed-nvls")) == [
        ("torch.cumsum", 7), ("torch.distributed-nvls", 11)], found


def test_detr_box_counts_and_level_offsets(tmp_path: Path) -> None:
    """fundamentalvision/Deformable-DETR (forty-fourth corpus, 3 false alarms): the box count summed across processes
    is a float tensor made from a Python int (`sum(len(t["labels"]) for t in targets)`), exact in any order; the
    level offsets are the running sum of the product of a long tensor's rows. A float tensor of a float value keeps
    its finding."""
    found = scan_files(tmp_path, {"detr.py": """\
        import torch
        import torch.distributed as dist
        def normalizer(targets, outputs, losses):
            num_boxes = sum(len(t["labels"]) for t in targets)
            num_boxes = torch.as_tensor([num_boxes], dtype=torch.float, device=outputs.device)
            dist.all_reduce(num_boxes)
            scale = torch.as_tensor([losses.mean().item()], dtype=torch.float, device=outputs.device)
            dist.all_reduce(scale)
            return num_boxes, scale
        def offsets(feature_maps):
            spatial_shapes = []
            for f in feature_maps:
                spatial_shapes.append(f.shape[-2:])
            spatial_shapes = torch.as_tensor(spatial_shapes, dtype=torch.long, device="cuda")
            return torch.cat((spatial_shapes.new_zeros((1,)), spatial_shapes.prod(1).cumsum(0)[:-1]))
        """}, "torch=2.11")
    assert sorted((f.record, f.line) for f in found if f.record in ("torch.cumsum", "torch.distributed-nvls")) == [
        ("torch.distributed-nvls", 8)], found


def test_a_running_sum_asked_in_an_integer_dtype(tmp_path: Path) -> None:
    """huggingface/nanotron's sequence offsets (forty-sixth corpus, 14 false alarms): `torch.cumsum(mask.sum(-1),
    dim=0, dtype=torch.int32, out=...)` casts its input to int32 and adds integers, exact in any order. A running sum
    asked in float32 keeps its finding."""
    found = scan_files(tmp_path, {"offsets.py": """\
        import torch
        def offsets(q_mask, scores):
            cu = torch.zeros(q_mask.shape[0] + 1, dtype=torch.int32, device="cuda")
            torch.cumsum(q_mask.sum(-1, dtype=torch.int32), dim=0, dtype=torch.int32, out=cu[1:])
            probs = torch.cumsum(scores, dim=-1, dtype=torch.float32)
            return cu, probs
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.cumsum") == [5], found
