"""A wav2vec 2.0-style self-supervised speech encoder at toy scale (after fairseq and
torchaudio): a 1-D convolutional feature encoder over raw audio with GroupNorm and GELU, a
convolutional relative position embedding, span masking with a learned mask vector, a
Transformer encoder, and a contrastive loss against sampled distractor frames."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureEncoder(nn.Module):
    def __init__(self, dim=128, layers=((5, 5), (3, 2), (3, 2), (3, 2), (2, 2))):
        super().__init__()
        blocks, cin = [], 1
        for i, (kernel, stride) in enumerate(layers):
            conv = nn.Conv1d(cin, dim, kernel, stride, bias=False)
            norm = nn.GroupNorm(dim, dim) if i == 0 else nn.Identity()
            blocks.append(nn.Sequential(conv, norm, nn.GELU()))
            cin = dim
        self.blocks = nn.Sequential(*blocks)

    def forward(self, wav):
        return self.blocks(wav[:, None]).transpose(1, 2)


class Wav2Vec(nn.Module):
    def __init__(self, dim=128, layers=2, heads=4):
        super().__init__()
        self.features = FeatureEncoder(dim)
        self.layer_norm = nn.LayerNorm(dim)
        self.post_proj = nn.Linear(dim, dim)
        self.mask_emb = nn.Parameter(torch.rand(dim))
        self.pos_conv = nn.utils.parametrizations.weight_norm(
            nn.Conv1d(dim, dim, 32, padding=16, groups=4), name="weight", dim=2)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.final_proj = nn.Linear(dim, dim)

    def forward(self, wav, mask):
        feats = self.layer_norm(self.features(wav))
        targets = self.post_proj(feats)
        x = torch.where(mask[..., None], self.mask_emb.to(feats.dtype), feats)
        x = x + F.gelu(self.pos_conv(x.transpose(1, 2))[:, :, :-1].transpose(1, 2))
        return self.final_proj(self.encoder(x)), targets


def span_mask(b, t, prob=0.65, span=10):
    mask = torch.zeros(b, t, dtype=torch.bool)
    starts = torch.rand(b, t) < prob / span
    for offset in range(span):
        mask[:, offset:] |= starts[:, :t - offset]
    return mask


def contrastive_loss(x, y, mask, distractors=20, temperature=0.1):
    b, t, d = y.shape
    xm, ym = x[mask], y[mask]
    batch_of = torch.arange(b, device=y.device)[:, None].expand(b, t)[mask]
    neg_t = torch.randint(0, t, (xm.size(0), distractors), device=y.device)
    negs = y[batch_of[:, None], neg_t]
    cands = torch.cat([ym[:, None], negs], dim=1)
    logits = F.cosine_similarity(xm[:, None].float(), cands.float(), dim=-1) / temperature
    return F.cross_entropy(logits, torch.zeros(xm.size(0), dtype=torch.long, device=y.device))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    model = Wav2Vec().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    samples = int(16_000 * args.seconds)
    with torch.no_grad():
        frames = model.features(torch.zeros(1, samples, device=args.device)).shape[1]
    for step in range(args.steps):
        t = torch.arange(samples) / 16_000
        freq = torch.randint(100, 2000, (8, 1)).float()
        wav = (torch.sin(2 * torch.pi * freq * t) + 0.1 * torch.randn(8, samples)).to(args.device)
        wav = (wav - wav.mean(1, keepdim=True)) / (wav.std(1, keepdim=True) + 1e-5)
        mask = span_mask(8, frames).to(args.device)
        x, y = model(wav, mask)
        loss = contrastive_loss(x, y, mask)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} masked {mask.float().mean().item():.2f}")


if __name__ == "__main__":
    main()
