"""A gather whose index has size 1 along the gathered dimension, shown through the rank of what is unsqueezed
(kb/scan/resolvers.py, one_index_per_row; kb/scan/syntax.py, reshaped_ndim): vwxyzjn/cleanrl's PQN agents (forty-fifth
corpus, 3 false alarms) gather Q-values at `b_actions[mb_inds].unsqueeze(-1)` along dim 1, where
`b_actions = actions.reshape(-1)` is 1-D, so the index is (B, 1). An index of two columns keeps the finding."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_an_action_per_row(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"pqn.py": """\
        import torch
        import torch.nn as nn
        def train(q_network, obs, actions, pairs):
            b_obs = obs.reshape(-1, 4)
            b_actions = actions.reshape(-1)
            old_val = q_network(b_obs).gather(1, b_actions.unsqueeze(-1)).squeeze()
            both = q_network(b_obs).gather(1, pairs.reshape(-1, 2))
            (old_val.sum() + both.sum()).backward()
        train(nn.Linear(4, 3).cuda(), torch.randn(128, 4, device="cuda"), torch.randint(0, 3, (16, 8), device="cuda"),
              torch.randint(0, 3, (128, 2), device="cuda"))
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.gather-backward") == [7], found
