"""Programs that make no cuDNN convolution: `torch.backends.cudnn.benchmark = True` has nothing to choose there.

cudnn.benchmark makes cuDNN time its convolution algorithms and keep the fastest on each run (torch.cudnn-benchmark),
so it matters only in a program that runs a cuDNN convolution or recurrent layer. Where no file of any program that
runs the setting's file names one (a conv or transposed conv layer or function, an LSTM / GRU / RNN), builds a model
it cannot see (torchvision, timm, torch.hub, a `from_pretrained`, another model library) or loads a whole pickled
model (`torch.load`, `torch.jit.load`), the setting picks nothing (RULES R6 / T6 of the ninth corpus: Tiiiger/SGC's
TextSGC, one nn.Linear and sparse products): the finding is a note. Read from the files' text, so any mention
keeps the finding.
"""

from __future__ import annotations

import re

from kb.scan import scope, sources

RECORD = "torch.cudnn-benchmark"
_MAKES_CUDNN = re.compile(
    r"onv(?:Transpose)?[123]d|conv_transpose|conv[123]d|onvolution|LSTM|GRU|RNN|torch\.hub|torch\.load|jit\.load|"
    r"from_pretrained|^\s*(?:import|from)\s+(?:torchvision|timm|transformers|segmentation_models_pytorch|mmcv|mmdet|"
    r"mmseg|detectron2|pretrainedmodels|efficientnet_pytorch|torchaudio|fairseq|diffusers|open_clip|clip|kornia|monai)\b",
    re.MULTILINE)
WHY = ("no program that runs this file makes a cuDNN convolution or recurrent layer (none of its files names a "
       "convolution, an LSTM / GRU / RNN, an outside model or a whole loaded model): cudnn.benchmark chooses "
       "cuDNN convolution algorithms and has none to choose here")


def settings_without_conv(paths: set[str], runs: list[scope.Run], reach: dict[str, tuple[int, ...]],
                          texts: sources.Texts) -> frozenset[str]:
    """The files of `paths` (those that set cudnn.benchmark) that no program making a cuDNN op runs; a file
    that cannot be read again keeps every finding."""
    out: set[str] = set()
    verdict: dict[str, bool] = {}
    for path in paths:
        ids = reach.get(path)
        if not ids:
            continue
        files = set().union(*(runs[k].files for k in ids))
        clean = True
        for f in sorted(files):
            if f not in verdict:
                text = texts.get(f)
                verdict[f] = text is not None and not _MAKES_CUDNN.search(text)
            if not verdict[f]:
                clean = False
                break
        if clean:
            out.add(path)
    return frozenset(out)
