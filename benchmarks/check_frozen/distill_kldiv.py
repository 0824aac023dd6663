"""Knowledge distillation (Hinton et al.) as the PyTorch tutorial writes it: a frozen wider
teacher CNN in eval mode, a small student trained on a mix of cross-entropy and
KLDivLoss(reduction="batchmean") between temperature-softened outputs, SGD with momentum."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def cnn(width, classes=10):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(2 * width * 16, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, classes))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--T", type=float, default=2.0)
    p.add_argument("--alpha", type=float, default=0.75)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    teacher, student = cnn(32).to(args.device), cnn(16).to(args.device)
    teacher.eval()
    for param in teacher.parameters():
        param.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    kl = nn.KLDivLoss(reduction="batchmean")
    images, labels = torch.randn(2048, 3, 32, 32), torch.randint(0, 10, (2048,))
    student.train()
    for step in range(args.steps):
        idx = torch.randperm(2048)[:64]
        x, y = images[idx].to(args.device), labels[idx].to(args.device)
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        soft = kl(F.log_softmax(s_logits / args.T, dim=1), F.softmax(t_logits / args.T, dim=1)) * args.T ** 2
        loss = args.alpha * soft + (1 - args.alpha) * F.cross_entropy(s_logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
