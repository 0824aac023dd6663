"""False alarms of the NLL / cross-entropy record (`torch.nll-loss`: only a 3-D or higher input runs the
spatial kernel) where the loss's input is 2-D but the scan did not see it (benchmarks/scan_frozen9/ and the
earlier corpora): one fixture per cause, written from the shape of the corpus's code."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def _nll(found: list[lookup.Finding]) -> set[tuple[str, int]]:
    """The NLL findings, notes aside (a note is no finding)."""
    return {(Path(f.path).name, f.line) for f in found if f.record == "torch.nll-loss" and f.level != "note"}


def test_a_loss_module_called_where_it_is_made_takes_the_rank_of_its_input(tmp_path):
    """facebookresearch/dino eval_linear.py (2 false alarms): `loss = nn.CrossEntropyLoss()(output, target)`, the
    module made and called at once, on `output = linear_classifier(output)`, a DistributedDataParallel of a
    class whose forward returns `self.linear(x.view(x.size(0), -1))`: (N, classes), 2-D. The input is read
    as that of an assigned loss's calls is; a 4-D input so called keeps its finding, and a module called
    where it is made is no module "never called" (`loss = nn.CrossEntropyLoss()(x, y)` names the loss's value)."""
    found = _scan(tmp_path, {"eval_linear.py": """\
        import torch
        import torch.nn as nn
        class LinearClassifier(nn.Module):
            def __init__(self, dim, n):
                super().__init__()
                self.linear = nn.Linear(dim, n)
            def forward(self, x):
                x = x.view(x.size(0), -1)
                return self.linear(x)
        def train(classifier, inp, target):
            output = classifier(inp)
            loss = nn.CrossEntropyLoss()(output, target)
            loss.backward()
        def main(inp, target):
            classifier = LinearClassifier(8, 10).cuda()
            classifier = nn.parallel.DistributedDataParallel(classifier)
            train(classifier, inp, target)
        def seg(x, y):
            loss = nn.CrossEntropyLoss()(x.view(2, 3, 4, 4), y)
            loss.backward()
        """})
    assert _nll(found) == {("eval_linear.py", 19)}, found


_TEXT_SGC = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from functools import partial
    class SGC(nn.Module):
        def __init__(self, nfeat, nclass):
            super().__init__()
            self.W = nn.Linear(nfeat, nclass)
        def forward(self, x):
            out = self.W(x)
            return out
    def train_linear(model, feats, labels, binary=False):
        if not binary:
            act = partial(F.log_softmax, dim=1)
            criterion = F.nll_loss
        else:
            act = torch.sigmoid
            criterion = F.binary_cross_entropy
        optimizer = optim.LBFGS(model.parameters())
        def closure():
            optimizer.zero_grad()
            output = model(feats).squeeze()
            loss = criterion(act(output), labels)
            loss.backward()
            return loss
        optimizer.step(closure)
        return eval_linear(model, feats, labels, binary), model
    def eval_linear(model, feats, labels, binary=False):
        if not binary:
            act = partial(F.log_softmax, dim=1)
            criterion = F.nll_loss
        else:
            act = torch.sigmoid
            criterion = F.binary_cross_entropy
        with torch.no_grad():
            output = model(feats).squeeze()
            loss = criterion(act(output), labels)
        return loss.item()
    def seg(x, y):
        criterion = F.nll_loss
        loss = criterion(x.view(2, 3, 4, 4), y)
        loss.backward()
    if __name__ == "__main__":
        model = SGC(10, 4).cuda()
        acc, best = train_linear(model, x, y)
        seg(x, y)
"""


def test_a_loss_function_held_in_a_name_takes_the_rank_of_its_calls(tmp_path):
    """Tiiiger/SGC downstream/TextSGC/train.py (2 false alarms): `criterion = F.nll_loss` (the other branch holds
    another loss) called as `criterion(act(output), label)`, in the function or in a closure of it (LBFGS's),
    where `act = partial(F.log_softmax, dim=1)` (or `torch.sigmoid`) keeps its input's shape, and `output =
    model(feats).squeeze()` is a Linear's (N, classes) output: squeezing leaves the classes last, so the loss
    reads them at dim 1 only on the (N, C) form. The reference takes its calls' rank, as an assigned loss
    module does; a 4-D input so called keeps its finding."""
    found = _scan(tmp_path, {"train.py": _TEXT_SGC})
    assert _nll(found) == {("train.py", 41)}, found


def test_a_model_handed_back_by_the_function_it_was_handed_to_is_the_same_model(tmp_path):
    """Tiiiger/SGC downstream/TextSGC/train.py: `val_acc, best_model, t = train_linear(model, ...)`, whose every
    return gives its parameter `model` at that place of the tuple: best_model is the model handed in (an SGC),
    and `eval_linear(best_model, ...)` computes the loss on its (N, classes) output."""
    found = _scan(tmp_path, {"train.py": _TEXT_SGC + "        eval_linear(best, x, y)\n"})
    assert _nll(found) == {("train.py", 41)}, found


def test_a_matrix_product_of_two_matrices_is_a_matrix(tmp_path):
    """CRIPAC-DIG/SR-GNN's scores are `torch.matmul(a, b.transpose(1, 0))`: the product of two 2-D tensors is 2-D
    (of stacks of matrices, the larger rank), so the loss on it runs no spatial kernel; a 4-D product keeps it."""
    found = _scan(tmp_path, {"m.py": """\
        import torch
        import torch.nn as nn
        def scores(a, b, y):
            s = torch.matmul(a.view(-1, 8), b.view(8, -1))
            loss = nn.functional.cross_entropy(s, y)
            loss.backward()
            t = torch.matmul(a.view(2, 3, 4, 8), b.view(8, 5))
            return nn.functional.cross_entropy(t, y)
        scores(torch.randn(4, 8).cuda(), torch.randn(8, 5).cuda(), torch.zeros(4))
        """})
    assert _nll(found) == {("m.py", 8)}, found


def test_a_module_handed_back_by_convert_sync_batchnorm_is_the_same_module(tmp_path):
    """facebookresearch/swav eval_linear.py:284 and :352 (2 false alarms): `reglog = RegLog(...)`, whose forward
    returns `self.linear(x.view(x.size(0), -1))`, passes through `nn.SyncBatchNorm.convert_sync_batchnorm(m)`
    (which returns the module it is given, its batch norms swapped in place), `.cuda()` and
    `DistributedDataParallel(m)` before `train(model, reglog, ...)` calls the loss on its output: (N, classes).
    A 4-D module so converted keeps its finding."""
    found = _scan(tmp_path, {"eval_linear.py": """\
        import torch
        import torch.nn as nn
        class RegLog(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.linear = nn.Linear(8, n)
            def forward(self, x):
                x = x.view(x.size(0), -1)
                return self.linear(x)
        def train(reglog, inp, target):
            criterion = nn.CrossEntropyLoss().cuda()
            loss = criterion(reglog(inp), target)
            loss.backward()
        def seg(net, inp, target):
            criterion = nn.CrossEntropyLoss().cuda()
            loss = criterion(net(inp), target)
            loss.backward()
        def main(inp, target):
            reglog = RegLog(10)
            reglog = nn.SyncBatchNorm.convert_sync_batchnorm(reglog)
            reglog = reglog.cuda()
            reglog = nn.parallel.DistributedDataParallel(reglog, device_ids=[0])
            train(reglog, inp, target)
            net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(nn.Conv2d(3, 10, 1))
            seg(net, inp, target)
        """})
    assert _nll(found) == {("eval_linear.py", 15)}, found


_RESNET50 = """\
    import torch
    import torch.nn as nn
    def conv3x3(in_planes, out_planes, stride=1):
        return nn.Conv2d(in_planes, out_planes, 3, stride, 1)
    class Bottleneck(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = conv3x3(inplanes, planes, stride)
        def forward(self, x):
            out = self.conv1(x)
            return out
    class ResNet(nn.Module):
        def __init__(self, block, layers, output_dim=0, hidden_mlp=0, eval_mode=False):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.eval_mode = eval_mode
            if output_dim == 0:
                self.projection_head = None
            elif hidden_mlp == 0:
                self.projection_head = nn.Linear(2048, output_dim)
            else:
                self.projection_head = nn.Sequential(
                    nn.Linear(2048, hidden_mlp), nn.BatchNorm1d(hidden_mlp), nn.ReLU(inplace=True),
                    nn.Linear(hidden_mlp, output_dim))
        def forward_backbone(self, x):
            x = self.conv1(x)
            if self.eval_mode:
                return x
            x = self.avgpool(x)
            return torch.flatten(x, 1)
        def forward_head(self, x):
            if self.projection_head is not None:
                x = self.projection_head(x)
            x = nn.functional.normalize(x, dim=1, p=2)
            if self.prototypes is not None:
                return x, self.prototypes(x)
            return x
        def forward(self, inputs):
            output = self.forward_backbone(torch.cat(inputs))
            return self.forward_head(output)
    class MultiPrototypes(nn.Module):
        def __init__(self, output_dim, nmb_prototypes):
            super().__init__()
            self.prototypes0 = nn.Linear(output_dim, nmb_prototypes[0])
        def forward(self, x):
            return [self.prototypes0(x)]
    def resnet50(**kwargs):
        return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)
    def resnet50w2(**kwargs):
        return ResNet(Bottleneck, [3, 4, 6, 3], widen=2, **kwargs)
"""


def test_a_model_picked_by_name_whose_head_is_a_linear_layer_in_every_branch_gives_classes_last(tmp_path):
    """facebookresearch/swav eval_semisup.py:245 and :311 (2 false alarms): `model = resnet_models.__dict__[args.arch](
    output_dim=1000)` picks among src/resnet50.py's public names, of which only the builders take `output_dim`
    alone (conv3x3, the blocks' and ResNet's constructors, MultiPrototypes would raise on that call): each returns
    a ResNet, whose `forward` returns `self.forward_head(output)`, a method of the class whose only tensor
    return is `x` after `self.projection_head(x)`, a Linear in one branch, a Sequential ending in one in the
    other (None in the third, never called: it would raise). The loss reads the classes at dim 1 of a tensor
    whose classes are last: (N, C). Picked with two sizes only the convolution and the block take, it is 4-D."""
    found = _scan(tmp_path, {"src/__init__.py": "", "src/resnet50.py": _RESNET50, "eval_semisup.py": """\
        import torch
        import torch.nn as nn
        import src.resnet50 as resnet_models
        def train(model, loader):
            criterion = nn.CrossEntropyLoss().cuda()
            for inp, target in loader:
                output = model(inp)
                loss = criterion(output, target)
                loss.backward()
        def main(args, loader):
            model = resnet_models.__dict__[args.arch](output_dim=1000)
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
            model = model.cuda()
            model = nn.parallel.DistributedDataParallel(model, device_ids=[0])
            train(model, loader)
        def other(args, loader, target):
            criterion = nn.CrossEntropyLoss().cuda()
            model = resnet_models.__dict__[args.arch](64, 10)
            loss = criterion(model(loader), target)
            loss.backward()
        """})
    assert _nll(found) == {("eval_semisup.py", 17)}, found


def test_a_sequential_given_a_starred_list_of_layers_applies_them_in_order(tmp_path):
    """facebookresearch/XLM xlm/evaluation/glue.py:158 (a false alarm): `self.proj = nn.Sequential(*[nn.Dropout(p),
    nn.Linear(d, n)]).cuda()`, a literal list of layers unpacked into the Sequential, ends in a Linear: the
    cross-entropy on `self.proj(...)` reads (N, C). A starred list ending in a Conv2d keeps its finding."""
    found = _scan(tmp_path, {"glue.py": """\
        import torch.nn as nn
        import torch.nn.functional as F
        class GLUE:
            def __init__(self, embedder, params):
                self.embedder = embedder
                self.proj = nn.Sequential(*[
                    nn.Dropout(params.dropout),
                    nn.Linear(self.embedder.out_dim, params.out_features)
                ]).cuda()
                self.seg = nn.Sequential(*[nn.Dropout(0.1), nn.Conv2d(3, 10, 1)]).cuda()
            def train(self, x, y, lengths):
                output = self.proj(self.embedder.get_embeddings(x, lengths))
                loss = F.cross_entropy(output, y)
                loss.backward()
                out = self.seg(self.embedder.get_embeddings(x, lengths))
                F.cross_entropy(out, y).backward()
        """})
    assert _nll(found) == {("glue.py", 16)}, found


def test_a_segmentation_model_read_through_its_head_and_methods_stays_4d(tmp_path):
    """The other side of the fixes above: a segmentation model whose `self.head` is a Conv2d in every branch (None
    in another) and whose forward returns `self.decode(x, img)`, a method returning `F.interpolate(x,
    size=img.shape[-2:])` (or a tuple with an auxiliary output): 4-D, the spatial kernel, a finding, and no
    longer only a possible one."""
    found = _scan(tmp_path, {"seg.py": """\
        import torch.nn as nn
        import torch.nn.functional as F
        class Seg(nn.Module):
            def __init__(self, n, aux=False, deep=False):
                super().__init__()
                self.head = None
                if deep:
                    self.head = nn.Conv2d(256, n, 1)
                else:
                    self.head = nn.Conv2d(512, n, 3, padding=1)
            def decode(self, x, img):
                if self.training and self.aux:
                    return F.interpolate(self.head(x), size=img.shape[-2:]), x
                return F.interpolate(self.head(x), size=img.shape[-2:])
            def forward(self, img):
                return self.decode(self.head(img), img)
        def train(img, target):
            model = Seg(10).cuda()
            criterion = nn.CrossEntropyLoss(ignore_index=255)
            loss = criterion(model(img), target)
            loss.backward()
        """})
    assert _nll(found) == {("seg.py", 19)}, found
    assert {f.level for f in found if f.record == "torch.nll-loss"} == {"nondeterministic"}, found  # read as 4-D


def test_a_module_level_loss_handed_on_from_a_function_that_reads_the_global(tmp_path):
    """hyunwoongko/transformer (twenty-third corpus, RULES R2): `criterion = nn.CrossEntropyLoss()` at module level is
    handed to `train(model, it, criterion)` from `run()`, a function that reads the global, and `train` calls it on
    `output.view(-1, V)` (2-D); only a hand-over in the module's own code was followed. A loss handed the same way to
    a 4-D input stays a finding."""
    found = _scan(tmp_path, {"train.py": """\
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss(ignore_index=0)
        spatial = nn.CrossEntropyLoss()


        def train(model, iterator, criterion):
            for src, trg in iterator:
                output = model(src)
                output_reshape = output.contiguous().view(-1, output.shape[-1])
                loss = criterion(output_reshape, trg.contiguous().view(-1))
                loss.backward()


        def segment(model, iterator, spatial):
            for src, trg in iterator:
                loss = spatial(model(src).view(4, 3, 8, 8), trg)
                loss.backward()


        def run(model, it):
            train(model, it, criterion)
            segment(model, it, spatial)
        """})
    assert _nll(found) == {("train.py", 4)}, found


def test_a_loss_and_a_model_a_set_up_function_hands_back(tmp_path):
    """HobbitLong/SupContrast main_ce.py, HobbitLong/CMC (21st and 24th corpora, 3 `possible` false alarms, RULES
    R2): `set_model` builds the classifier and `nn.CrossEntropyLoss()` and returns both; the caller unpacks them
    (`model, criterion = set_model(opt)`) and hands them to `train`, which calls `criterion(model(x), y)` on the
    (N, classes) logits of a Linear head. The same loss on a model whose forward ends in a convolution (4-D maps)
    stays a finding."""
    found = _scan(tmp_path, {"nets.py": """\
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self, encoder, n):
                super().__init__()
                self.encoder = encoder
                self.fc = nn.Linear(128, n)
            def forward(self, x):
                return self.fc(self.encoder(x))
        class Seg(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.conv = nn.Conv2d(3, n, 1)
            def forward(self, x):
                return self.conv(x)
        """, "main_ce.py": """\
        import torch
        from nets import Head
        def set_model(encoder):
            model = Head(encoder, 10)
            criterion = torch.nn.CrossEntropyLoss()
            if torch.cuda.is_available():
                model = torch.nn.DataParallel(model)
                model = model.cuda()
                criterion = criterion.cuda()
            return model, criterion
        def train(loader, model, criterion, optimizer):
            for images, labels in loader:
                output = model(images)
                loss = criterion(output, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        def main(loader, encoder):
            model, criterion = set_model(encoder)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train(loader, model, criterion, optimizer)
        if __name__ == "__main__":
            main(None, None)
        """, "main_seg.py": """\
        import torch
        from nets import Seg
        def set_model():
            model = Seg(21).cuda()
            criterion = torch.nn.CrossEntropyLoss()
            return model, criterion
        def train(loader, model, criterion, optimizer):
            for images, labels in loader:
                loss = criterion(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        def main(loader):
            model, criterion = set_model()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train(loader, model, criterion, optimizer)
        if __name__ == "__main__":
            main(None)
        """})
    assert _nll(found) == {("main_seg.py", 5)}, found


def test_a_class_index_target_converted_by_long_and_logits_indexed(tmp_path):
    """mlfoundations/open_clip train.py (36th corpus, 2 `possible` false alarms, RULES R2): `labels =
    torch.arange(n, device=device).long()` is still 1-D, so `F.cross_entropy(logits, labels)` takes (N, C) logits.
    Lightning-AI/lit-llama evaluate/*.py (39th corpus, 4 `possible` false alarms): `logits = model(inp)[0]` then
    `F.cross_entropy(logits[:-1], ...)`, where the model (made by its class's own `from_name` classmethod and wrapped
    by `fabric.setup_module`) ends its forward in its Linear head: indexing the batch away and slicing keep the
    classes last, so the input is (N, C). A target of unknown rank on logits of unknown
    rank stays `possible`."""
    found = _scan(tmp_path, {"lm.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class LM(nn.Module):
            def __init__(self, v, d):
                super().__init__()
                self.wte = nn.Embedding(v, d)
                self.lm_head = nn.Linear(d, v, bias=False)
            def forward(self, idx):
                x = self.wte(idx)
                logits = self.lm_head(x)
                return logits
            @classmethod
            def from_name(cls, name):
                return cls(100, 16)
        def evaluate(fabric, tokens):
            with fabric.init_module():
                model = LM.from_name("7B")
            model = fabric.setup_module(model)
            model.train()
            inp = tokens[:, :64]
            logits = model(inp)[0]
            nll = F.cross_entropy(logits[:-1], inp[0, 1:].to(dtype=torch.long), reduction="sum")
            nll.backward()
        def contrastive(image_features, text_features, device, y):
            logits = image_features @ text_features.t()
            labels = torch.arange(logits.shape[0], device=device).long()
            loss = F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)
            loss.backward()
            other = F.cross_entropy(image_features, y)
            other.backward()
        """})
    assert _nll(found) == {("lm.py", 30)}, found
