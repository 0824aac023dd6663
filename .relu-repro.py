import torch, torch.nn as nn
from kb import probe
torch.manual_seed(0)
class M(nn.Module):
    def __init__(s):
        super().__init__(); s.a=nn.Linear(8,8); s.b=nn.Linear(8,4)
    def forward(s,x):
        h=torch.relu(s.a(x))
        h=torch.einsum("bi,bi->bi", h, h)
        return s.b(h)
m=M(); opt=torch.optim.SGD(m.parameters(),0.1)
probe.watch(m,opt)
for i in range(3):
    opt.zero_grad(); m(torch.randn(4,8)).sum().backward(); opt.step()
print("done", float(m.a.weight.sum()))
