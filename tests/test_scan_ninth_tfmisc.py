"""Causes found on the ninth frozen scan corpus (benchmarks/scan_frozen9/, docs/scan.md) in TensorFlow graph
code and look-alikes, each fixed at its cause: one fixture per cause, written from the shape of the code the
corpus showed."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_tf1_resize_images_with_a_method_number_is_the_nearest_resize(tmp_path):
    """Rayhane-mamah/Tacotron-2's `tf.image.resize_images(x, size=..., method=1)`: TF 1's other name of
    `tf.compat.v1.image.resize`, whose method is a ResizeMethodV1 number (1 is NEAREST_NEIGHBOR), read as
    `tf.image.resize(method="nearest")`; 0 (BILINEAR) is the bilinear resize."""
    found = _scan(tmp_path, {"train.py": """\
        import tensorflow as tf
        def up(x):
            a = tf.image.resize_images(x, size=[4, 4], method=1)
            b = tf.compat.v1.image.resize_images(x, [4, 4], 0)
            c = tf.compat.v1.image.resize(x, [4, 4], method=1)
            return a + b + c
        x = tf.Variable(tf.ones([1, 2, 2, 1]))
        with tf.GradientTape() as tape:
            y = up(x)
        g = tape.gradient(y, x)
        """}, "tensorflow=2.20")
    assert sorted((f.line, f.record) for f in found if "resize" in f.record) == [
        (3, "tf.resize-nearest-backprop"), (4, "tf.resize-bilinear-backprop"), (5, "tf.resize-nearest-backprop")], found


def test_ddp_imported_from_its_defining_module_is_ddp(tmp_path):
    """openai/consistency_models' `from torch.nn.parallel.distributed import DistributedDataParallel as DDP`:
    the module that defines the class, whose instance is `torch.nn.parallel.DistributedDataParallel`
    (the gradient all-reduce of torch.distributed-nvls)."""
    found = _scan(tmp_path, {"train.py": """\
        import torch
        import torch.distributed as dist
        from torch.nn.parallel.distributed import DistributedDataParallel as DDP
        dist.init_process_group("nccl")
        model = torch.nn.Linear(4, 4).cuda()
        ddp = DDP(model, device_ids=[0])
        ddp(torch.ones(2, 4).cuda()).sum().backward()
        """}, "torch=2.11")
    assert [(f.line, f.record) for f in found if f.record == "torch.distributed-nvls"] == [
        (6, "torch.distributed-nvls")], found


def test_map_of_a_thread_pool_bound_by_with_is_no_tf_data_map(tmp_path):
    """openai/consistency_models' evaluator: `with ThreadPool(n) as pool: pool.map(...)` in a TensorFlow file
    is multiprocessing's map (the pool's `__enter__` gives the pool), not `tf.data.Dataset.map`."""
    found = _scan(tmp_path, {"evaluator.py": """\
        from functools import partial
        from multiprocessing.pool import ThreadPool
        import numpy as np
        import tensorflow.compat.v1 as tf
        def part(arr, kth, n):
            with ThreadPool(n) as pool:
                return list(pool.map(partial(np.partition, kth=kth), arr))
        def pipeline(ds, fn):
            with open("x") as pool:
                return pool.map(fn, num_parallel_calls=4)
        """}, "tensorflow=2.20")
    assert [(f.line, f.record) for f in found if f.record == "tf.data-loader-parallelism"] == [
        (10, "tf.data-loader-parallelism")], found


def test_cumsum_of_unique_consecutive_counts_is_an_integer_scan(tmp_path):
    """facebookresearch/dino's MultiCropWrapper: `torch.cumsum(torch.unique_consecutive(t, return_counts=True)[1], 0)`
    adds the int64 counts unique returns (whatever t's dtype): exact in any order, no torch.cumsum site;
    the first item (the unique values, of t's dtype) is still one."""
    found = _scan(tmp_path, {"wrapper.py": """\
        import torch
        def crops(x, t):
            idx = torch.cumsum(torch.unique_consecutive(torch.tensor([i.shape[-1] for i in x]), return_counts=True)[1], 0)
            vals = torch.cumsum(torch.unique_consecutive(t, return_counts=True)[0], 0)
            return idx, vals
        """}, "torch=2.11")
    assert [f.line for f in found if f.record == "torch.cumsum"] == [4], found


def test_a_keras_layer_built_with_its_weights_draws_nothing_read(tmp_path):
    """qqwweee/keras-yolo3's convert.py: `Conv2D(..., weights=conv_weights)` with the Darknet file's kernel: Keras 2
    sets the given weights over the drawn ones as it builds the layer, and Keras 3 layers take no `weights`
    argument (the construction raises): the unseeded kernel draw is a note. `weights=None` and a layer without
    the argument keep their finding."""
    found = _scan(tmp_path, {"convert.py": """\
        import numpy as np
        from keras.layers import Conv2D, Input
        from keras.models import Model
        w = np.load("w.npy")
        x = Input(shape=(8, 8, 3))
        a = Conv2D(4, (3, 3), weights=[w, np.zeros(4)])(x)
        b = Conv2D(4, (3, 3), weights=None)(a)
        c = Conv2D(4, (3, 3))(b)
        Model(x, c).save("m.h5")
        """}, "tensorflow=2.20")
    assert [f.line for f in found if f.record == "keras.unseeded-random" and not f.note] == [7, 8], found


def test_cudnn_benchmark_where_only_names_comments_or_state_dicts_mention_a_cudnn_layer(tmp_path):
    """BlinkDL/RWKV-LM (forty-ninth corpus, 23 false alarms): a model class named `RWKV_RNN`, a comment "a pure RNN
    (attention-free)" or "torch.load", a checkpoint read as a state dict (`w = torch.load(p)`, then `w.keys()`, or
    `self.z = torch.load(p)` then `z[k]`), a tokenizer imported from transformers and torchvision's transforms make
    no cuDNN layer. A real `nn.GRU`, a `torch.load` kept whole and a transformers model keep the finding."""
    quiet = """\
        import torch
        import torchvision.transforms as T
        from transformers import GPT2TokenizerFast
        from src.model_run import RWKV_RNN
        # set it to 0, then it's a pure RNN (attention-free); search for "torch.load" to resume
        torch.backends.cudnn.benchmark = True
        w = torch.load("m.pth", map_location="cpu")
        names = list(w.keys())
        class Holder:
            def __init__(self):
                self.z = torch.load("m.pth", map_location="cuda")
            def emb(self):
                z = self.z
                return z["emb.weight"]
        model = RWKV_RNN(w).cuda()
        model(torch.ones(4, 8).cuda()).sum().backward()
        """
    loud = {"gru": "nn.GRU(4, 4)", "whole": "whole = torch.load('m.pt')\n        whole.eval()",
            "hf": "from transformers import AutoModelForCausalLM"}
    files = {"quiet/train.py": quiet}
    for folder, line in loud.items():
        files[f"{folder}/train.py"] = quiet.replace("import torch\n", f"import torch\n        from torch import nn\n        {line}\n", 1)
    found = _scan(tmp_path, files, "torch=2.11")
    assert sorted(Path(f.path).parent.name for f in found if f.record == "torch.cudnn-benchmark") == \
        ["gru", "hf", "whole"], found


def test_cudnn_benchmark_in_a_program_with_no_convolution_is_a_note(tmp_path):
    """Tiiiger/SGC's TextSGC: `torch.backends.cudnn.benchmark = True` in a program of one nn.Linear and sparse
    products: cuDNN has no convolution algorithm to choose. A program whose other file makes a Conv2d keeps it."""
    found = _scan(tmp_path, {"sgc/train.py": """\
        import torch
        from models import SGC
        torch.backends.cudnn.benchmark = True
        model = SGC(8, 2).cuda()
        model(torch.ones(4, 8).cuda()).sum().backward()
        """, "sgc/models.py": """\
        import torch.nn as nn
        class SGC(nn.Module):
            def __init__(self, n, c):
                super().__init__()
                self.W = nn.Linear(n, c)
            def forward(self, x):
                return self.W(x)
        """, "cnn/train.py": """\
        import torch
        from net import Net
        torch.backends.cudnn.benchmark = True
        model = Net().cuda()
        model(torch.ones(4, 3, 8, 8).cuda()).sum().backward()
        """, "cnn/net.py": """\
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 4, 3)
            def forward(self, x):
                return self.c(x)
        """}, "torch=2.11")
    assert [(Path(f.path).parent.name, f.line) for f in found if f.record == "torch.cudnn-benchmark"] == [("cnn", 3)], found


def test_an_op_handed_to_a_helper_that_calls_it_with_the_other_keywords(tmp_path):
    """affinelayer/pix2pix-tensorflow's tools/tfimage.py: `create_op(func=tf.image.resize_images, images=...,
    method=tf.image.ResizeMethod.AREA)` where `create_op(func, **placeholders)` runs `func(**placeholders)`: a call
    of the resize with method AREA (neither resize record), not a reference of unknown arguments; a helper
    that does not forward its keywords keeps the reference."""
    found = _scan(tmp_path, {"tfimage.py": """\
        import tensorflow as tf
        def create_op(func, **placeholders):
            op = func(**placeholders)
            return op
        def keep(func, **placeholders):
            return func
        downscale = create_op(func=tf.image.resize_images, images=tf.placeholder(tf.float32), method=tf.image.ResizeMethod.AREA)
        nearest = create_op(func=tf.image.resize_images, images=tf.placeholder(tf.float32), method=1)
        other = keep(func=tf.image.resize_images, method=tf.image.ResizeMethod.AREA)
        """}, "tensorflow=2.20")
    assert sorted({f.line for f in found if "resize" in f.record}) == [8, 9], found


def test_tf2_api_under_its_compat_v2_name(tmp_path):
    """google-research/pegasus's layers (forty-second corpus, 2 misses, found after its measure): `import tensorflow as
    tf`, then `tf.compat.v2.nn.dropout(x, rate)`, TensorFlow 2's `tf.nn.dropout` under its compat name: the same
    unseeded draw. `tf.compat.v2.gather` is `tf.gather` too."""
    found = _scan(tmp_path, {"layers.py": """\
        import tensorflow as tf
        def attend(x, table, ids, rate, training):
            if training:
                x = tf.compat.v2.nn.dropout(x, rate)
            return x, tf.compat.v2.gather(table, ids)
        """}, "tensorflow=2.20")
    assert {(f.line, f.record) for f in found if f.level != "note"} >= {(4, "tf.random-seeds"), (5, "tf.gather-backprop")}, found
