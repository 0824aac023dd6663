"""An image classifier as the performance guides write it: a small ResNet (BasicBlocks,
BatchNorm), channels_last memory format, mixed precision (float16 autocast with GradScaler),
torch.backends.cudnn.benchmark = True, global average pooling, SGD with momentum."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)), inplace=True)


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(BasicBlock(32, 32, 1), BasicBlock(32, 64, 2), BasicBlock(64, 128, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    cuda = args.device == "cuda"
    model = ResNet().to(args.device).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=cuda)
    images = torch.randn(256, 3, 32, 32)
    labels = torch.randint(0, 10, (256,))
    for step in range(args.steps):
        idx = torch.randint(0, 256, (32,))
        x = images[idx].to(args.device, non_blocking=True).to(memory_format=torch.channels_last)
        y = labels[idx].to(args.device, non_blocking=True)
        with torch.autocast(device_type=args.device, dtype=torch.float16, enabled=cuda):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
