"""Programs that make no cuDNN convolution: `torch.backends.cudnn.benchmark = True` has nothing to choose there.

cudnn.benchmark makes cuDNN time its convolution algorithms and keep the fastest on each run (torch.cudnn-benchmark),
so it matters only in a program that runs a cuDNN convolution or recurrent layer. Where no file of any program that
runs the setting's file names one (a conv or transposed conv layer or function, an LSTM / GRU / RNN), builds a model
it cannot see (torchvision, timm, torch.hub, a `from_pretrained`, another model library) or loads a whole pickled
model (`torch.jit.load`, a `torch.load` not read as a state dict), the setting picks nothing (RULES R6 / T6 of the ninth corpus: Tiiiger/SGC's
TextSGC, one nn.Linear and sparse products): the finding is a note. Read from the files' text, so any mention
keeps the finding.
"""

from __future__ import annotations

import re

from kb.scan import scope, sources

RECORD = "torch.cudnn-benchmark"
# A recurrent layer by its class (`nn.LSTM`, `LSTM(`, `GRUCell`, imported by name): not a word that merely holds
# the letters (BlinkDL/RWKV-LM's `RWKV_RNN` model class and its "RNN-mode" comments, which run no cuDNN RNN).
_MAKES_CUDNN = re.compile(
    r"onv(?:Transpose)?[123]d|conv_transpose|conv[123]d|onvolution|\.(?:LSTM|GRU|RNN)(?:Cell)?\b|"
    r"(?<![\w-])(?:LSTM|GRU|RNN)(?:Cell)?\s*\(|^\s*from\s[^\n]*\bimport\b[^\n]*\b(?:LSTM|GRU|RNN)(?:Cell)?\b|"
    r"torch\.hub|jit\.load|"
    r"from_pretrained|^\s*(?:import|from)\s+(?:torchvision(?!\.(?:transforms|datasets|io|utils)\b)|timm|transformers|"
    r"segmentation_models_pytorch|mmcv|mmdet|mmseg|detectron2|pretrainedmodels|efficientnet_pytorch|torchaudio|fairseq|diffusers|open_clip|clip|kornia|monai)\b",
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
                code = _without_comments(text) if text is not None else None
                verdict[f] = code is not None and not _makes_cudnn(code) and not _loads_a_model(code)
            if not verdict[f]:
                clean = False
                break
        if clean:
            out.add(path)
    return frozenset(out)


_ASSIGNED = re.compile(r"((?:\w+\.)*(\w+))[ \t]*=")
_STATE_DICT_ARGUMENT = re.compile(r"load_state_dict\(\s*$")


def _loads_a_model(text: str) -> bool:
    """Whether a `torch.load` may return a whole pickled model: any, but one handed straight to `load_state_dict(`
    or bound to a name the file reads as a mapping of tensors (`w = torch.load(path)`, then `w.keys()`, `w[k]` or
    `model.load_state_dict(w)`): a checkpoint's state dict (BlinkDL/RWKV-LM's `torch.load(MODEL_NAME + '.pth')`)."""
    at = text.find("torch.load(")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        before = text[max(line_start, at - 200):at]
        if not _STATE_DICT_ARGUMENT.search(before):
            bound = _ASSIGNED.fullmatch(before.strip())  # the statement `name = torch.load(...)` (or `self.z = ...`,
            name = bound.group(2) if bound is not None else None  # read through its last part: `z = self.z`, `z[k]`)
            if name is None or not re.search(rf"\b{name}\s*\.\s*(?:keys|items|values)\s*\(|\b{name}\s*\[|"
                                             rf"load_state_dict\(\s*(?:\w+\.)*{name}\b", text):
                return True
        at = text.find("torch.load(", at + 1)
    return False


# a comment line, or a comment after code with no quote before it (a `#` inside a string stays)
_COMMENT = re.compile(r"^[ \t]*#[^\n]*|^([^\n#'\"]*?)[ \t]+#[^\n]*", re.MULTILINE)


def _without_comments(text: str) -> str:
    """The text less its comments, which name what the code does not run (RWKV-v3's "# set it to 0, then it's a
    pure RNN (attention-free)", "# Search for "torch.load" here")."""
    return _COMMENT.sub(lambda m: m.group(1) or "", text) if "#" in text else text


_TOKENIZERS_ONLY = re.compile(r"\s*from\s+transformers\s+import\s+\(?\s*\w*Tokenizer\w*(?:\s*,\s*\w*Tokenizer\w*)*\s*\)?\s*$")


def _makes_cudnn(code: str) -> bool:
    """Whether the code names a cuDNN convolution or recurrent layer, or a library that builds models; not an
    import of a tokenizer alone (`from transformers import GPT2TokenizerFast`: no model)."""
    for found in _MAKES_CUDNN.finditer(code):
        if "transformers" in found.group(0):
            start = code.rfind("\n", 0, found.start() + 1) + 1
            end = code.find("\n", found.end())
            if _TOKENIZERS_ONLY.fullmatch(code[start:end if end >= 0 else len(code)]):
                continue
        return True
    return False

