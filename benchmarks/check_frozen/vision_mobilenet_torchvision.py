"""Training torchvision's MobileNetV3-Small from scratch on CIFAR-sized images, as the
torchvision classification reference does at small scale: torchvision.models with
num_classes, torchvision.transforms.v2 batch augmentation, label smoothing, RMSprop, and
an exponential moving average of the weights. Needs torchvision."""
import argparse

import torch
import torch.nn.functional as F
import torchvision
from torchvision.transforms import v2


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10).to(args.device)
    ema = torch.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999))
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9, eps=0.0316, momentum=0.9, weight_decay=1e-5)
    augment = v2.Compose([v2.RandomResizedCrop(64, scale=(0.35, 1.0), antialias=True), v2.RandomHorizontalFlip()])
    images = torch.rand(512, 3, 64, 64)
    labels = torch.randint(0, 10, (512,))
    model.train()
    for step in range(args.steps):
        idx = torch.randint(0, 512, (args.batch_size,))
        x = torch.stack([augment(img) for img in images[idx]]).to(args.device)
        x = v2.functional.normalize(x, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        y = labels[idx].to(args.device)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update_parameters(model)
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
