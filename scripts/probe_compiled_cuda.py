"""A torch.compile'd model (default backend: Inductor) on CUDA under kb.probe.watch: how many
graphs TorchDynamo compiles per run, the time, and the blame of a difference planted in run 2
inside the compiled forward. Writes one JSON document to argv[1]."""
import json
import sys
import tempfile
import time

import torch
import torch._dynamo.utils as dynamo_utils

from kb import probe
from kb.probe.diff import Run, compare

RUN = 1


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(256, 256), torch.nn.Linear(256, 16)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.a(x))
        if RUN == 2:  # the planted difference, inside the compiled code
            h = h + 1e-3
        return self.b(h)


out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "runs": []}
d = tempfile.mkdtemp()
for RUN in (1, 2):
    dynamo_utils.counters.clear()
    torch._dynamo.reset()
    start = time.perf_counter()
    probe.configure(f"{d}/run{RUN}")
    torch.manual_seed(0)
    model = torch.compile(Small().cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = probe.watch(model, opt)
    x = torch.randn(64, 256, device="cuda")
    for _ in range(3):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    handle.remove()
    probe.close()
    probe.configure(None)
    out["runs"].append({"run": RUN, "seconds": round(time.perf_counter() - start, 2),
                        "frames": dict(dynamo_utils.counters["frames"]),
                        "unique_graphs": dynamo_utils.counters["stats"]["unique_graphs"]})
report = compare(Run(f"{d}/run1"), Run(f"{d}/run2"))
out["first"] = report["first"] and {k: report["first"][k] for k in ("step", "kind", "name")}
out["message"] = report.get("message")
out["answers"] = [{k: a.get(k) for k in ("op", "place", "deterministic", "sources", "recipe", "shown")}
                  for a in report.get("blame", {}).get("answers", [])]
places = json.load(open(f"{d}/run1/places.json"))
out["places"] = {k: v for k, v in places.items() if k in ("Small", "a", "a.weight")}
out["not_recorded"] = report.get("not_recorded")
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
