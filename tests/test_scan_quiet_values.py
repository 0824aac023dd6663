"""False alarms of the ninth corpus (benchmarks/scan_frozen9/) fixed after its measure, so not a measure of
it: loaders over datasets whose transforms the construction shows to be deterministic (RULES R3), and values
that carry no gradient (R4)."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

_EVAL = """
import os
import torch
from torchvision import datasets
from torchvision import transforms as T


class IndexedFolder(datasets.ImageFolder):
    def __getitem__(self, idx):
        img, lab = super(IndexedFolder, self).__getitem__(idx)
        return img, idx


class PathsDataset(torch.utils.data.Dataset):
    def __init__(self, root, names, transform=None):
        self.samples = [os.path.join(root, n) for n in names]
        self.transform = transform

    def __getitem__(self, i):
        with open(self.samples[i], "rb") as f:
            img = f.read()
        if self.transform is not None:
            img = self.transform(img)
        return img, i

    def __len__(self):
        return len(self.samples)


def evaluate(args, names):
    transform = T.Compose([
        T.Resize(256, interpolation=3),
        T.CenterCrop(224),
        T.ToTensor(),
        T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    train = IndexedFolder(os.path.join(args.data, "train"), transform=transform)
    sampler = torch.utils.data.DistributedSampler(train, shuffle=False)
    a = torch.utils.data.DataLoader(train, sampler=sampler, num_workers=args.workers)
    val = IndexedFolder(os.path.join(args.data, "val"), transform=transform)
    b = torch.utils.data.DataLoader(val, batch_size=8, num_workers=args.workers)
    listed = PathsDataset(args.data, names, transform=transform)
    c = torch.utils.data.DataLoader(listed, num_workers=args.workers,
                                    sampler=torch.utils.data.DistributedSampler(listed, shuffle=False))
    return a, b, c


def train(args, names):
    aug = T.Compose([T.RandomResizedCrop(224), T.ToTensor()])
    d = torch.utils.data.DataLoader(IndexedFolder(args.data, transform=aug), num_workers=args.workers)
    e = torch.utils.data.DataLoader(PathsDataset(args.data, names, transform=aug), num_workers=args.workers)
    f = torch.utils.data.DataLoader(PathsDataset(args.data, names, aug), num_workers=args.workers)
    return d, e, f
"""


_LISTED = """
import os
import torch
from torchvision import transforms as T
from elsewhere import make_items


class Blocks:
    def __init__(self, root):
        self.root = root

    def get_block(self, i):
        folder = self.root + "/" + str(i)
        names = [folder + "/" + n for n in sorted(os.listdir(folder))]
        return names


class ListDataset(torch.utils.data.Dataset):
    def __init__(self, img_list, transform=None):
        self.samples = img_list
        self.transform = transform

    def __getitem__(self, i):
        with open(self.samples[i], "rb") as f:
            img = f.read()
        if self.transform is not None:
            img = self.transform(img)
        return img, i


def extract(image_list, args):
    transform = T.Compose([T.Resize((224, 224)), T.ToTensor()])
    ds = ListDataset(image_list, transform=transform)
    return torch.utils.data.DataLoader(ds, num_workers=4,
                                       sampler=torch.utils.data.DistributedSampler(ds, shuffle=False))


def extract_other(items, args):
    ds = ListDataset(items, transform=T.ToTensor())
    return torch.utils.data.DataLoader(ds, num_workers=4)


def main(args):
    blocks = Blocks(args.data)
    for q in range(3):
        extract(blocks.get_block(q), args)
    extract([os.path.join(args.extra, s) for s in os.listdir(args.extra)], args)
    extract_other(make_items(args), args)
"""


def test_loaders_over_datasets_given_deterministic_transforms(tmp_path: Path) -> None:
    """facebookresearch/dino's evaluation loaders (5 false alarms, RULES R3): a dataset class of the code
    base that subclasses a torchvision dataset (`class ReturnIndexDataset(datasets.ImageFolder)`, its
    `__getitem__` calling the base's) or keeps the transform it is given (`self.transform = transform`,
    called in `__getitem__`), made with a Compose of Resize, CenterCrop, ToTensor and Normalize, draws
    nothing in the workers: the scan could read neither. The same classes made with RandomResizedCrop stay
    findings."""
    found = scan_files(tmp_path, {"evaluate.py": _EVAL}, "torch=2.11")
    lines = sorted(f.line for f in found if f.record == "torch.data-loader-workers" and not f.note)
    assert lines == [50, 51, 52], found


def test_a_list_of_paths_a_dataset_keeps_through_callers_and_a_method(tmp_path: Path) -> None:
    """facebookresearch/dino's eval_copy_detection.py (1 false alarm, RULES R3): the dataset keeps the list
    it is given (`self.samples = img_list`) and indexes it; the list is a parameter of the function that
    makes the loader, and every caller gives paths (a list comprehension of `os.path.join`, or what a method
    of a class of the code base returns, `dataset.get_block(q)`, a comprehension of joined strings). The
    scan read no parameter's callers there (only an annotation) and no method called on an instance. A
    list from a function of another library stays a finding."""
    found = scan_files(tmp_path, {"listed.py": _LISTED}, "torch=2.11")
    lines = sorted(f.line for f in found if f.record == "torch.data-loader-workers" and not f.note)
    assert lines == [40], found


_TARGETS = """
import torch as th
import torch.nn.functional as F


class Diffusion:
    def losses(self, model, target_model, x_start, noise, t):
        def denoise_fn(x, t):
            return model(x, t)

        @th.no_grad()
        def target_denoise_fn(x, t):
            return target_model(x, t)

        distiller = denoise_fn(x_start + noise, t)
        distiller_target = target_denoise_fn(x_start, t)
        distiller_target = distiller_target.detach()
        if self.loss_norm == "l2":
            loss = ((distiller - distiller_target) ** 2).mean()
        elif self.loss_norm == "lpips":
            if x_start.shape[-1] < 256:
                distiller = F.interpolate(distiller, size=224, mode="bilinear")
                distiller_target = F.interpolate(distiller_target, size=224, mode="bilinear")
            loss = self.lpips(distiller, distiller_target)
        return loss

    def refine(self, model, x):
        y = x.detach()
        for _ in range(3):
            z = F.interpolate(y, scale_factor=2, mode="bilinear")
            y = model(z)
        return y
"""


def test_a_name_whose_value_where_it_is_read_is_detached(tmp_path: Path) -> None:
    """openai/consistency_models' targets (2 false alarms, RULES R4): `distiller_target = target(...)`, then
    `distiller_target = distiller_target.detach()`, then, in a branch, `F.interpolate(distiller_target, ...)`:
    the scan read every binding of the name in the function (the model output first) and kept the record of
    the backward pass, but the value the name holds there is the detached one (the last binding before the
    use, in its block or the blocks around it, through `if` branches; a loop that rebinds the name later
    keeps every binding). The trainable output's resize and a loop's rebinding stay findings."""
    found = scan_files(tmp_path, {"diffusion.py": _TARGETS}, "torch=2.11")
    lines = sorted(f.line for f in found if f.record == "torch.interpolate-bilinear-backward" and not f.note)
    assert lines == [22, 30], found
