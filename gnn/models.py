"""Heterogeneous GNNs with an edge-level readout over (current observation, prior observation) pairs.

:class:`ProgressionGNN` encodes every node type with its own linear layer, runs ``layers`` rounds of
heterogeneous message passing (``HeteroConv``: one convolution per edge type, summed per destination
type, with residual connections), and classifies each pair from its two observation embeddings:

    h_v^{(0)} = W_{type(v)} x_v
    h_v^{(l+1)} = h_v^{(l)} + dropout(ReLU(sum_{r=(s, rel, type(v))} conv_r^{(l)}(h^{(l)}_s, h^{(l)}_v)))
    z(c, p) = MLP([h_c ; h_p ; h_c - h_p ; h_c * h_p])
    logits(c, p) = Linear([z(c, p) ; ctx_anatomy ; ctx_finding ; ctx_study])     (5 classes)

The pair context (``pair_context=True``) is one round of message passing between the pairs of a
study pair: ``ctx_anatomy`` is the mean ``z`` of the other pairs at the same anatomy node,
``ctx_finding`` of the other pairs of the same finding, ``ctx_study`` of all other pairs. Observation
nodes alone cannot carry this: anatomy and finding nodes average the current and the prior study's
observations together, so what they pass on is a level, not a change; the pairs' ``z`` are changes.
Without it the classifier is ``MLP(z)``.

Convolutions: ``sage`` (GraphSAGE mean aggregation, Hamilton et al., NeurIPS 2017),
``gat`` (GATConv, Velickovic et al., ICLR 2018, no self loops across types) or ``hgt`` (HGTConv,
Hu et al., WWW 2020), all from PyTorch Geometric.
"""

from __future__ import annotations

from typing import Literal, get_args

import torch
from torch import Tensor, nn
from torch_geometric.nn import GATConv, HeteroConv, HGTConv, SAGEConv
from torch_geometric.utils import scatter

from gnn.dataset import CLASSES, EDGE_TYPES, LABEL_EDGE, NODE_TYPES

Conv = Literal["sage", "gat", "hgt"]
CONVS = get_args(Conv)


class ProgressionGNN(nn.Module):
    """Heterogeneous GNN + pair readout.

    Args:
        in_dims: input feature size per node type (``observation`` is F, ``anatomy`` / ``finding``
            the vocabulary sizes, ``study`` 2, or 2 + D + 1 with D-dimensional region embeddings).
        hidden: hidden size H.
        layers: message-passing rounds (>= 1).
        conv: ``sage``, ``gat`` or ``hgt``.
        dropout: dropout probability.
        heads: attention heads for ``gat`` / ``hgt`` (H must be divisible by it for ``hgt``).
        pair_context: classify each pair with the pooled changes of the other pairs (see above).

    Input: a (batched) ``HeteroData`` from :mod:`gnn.dataset`. Output: ``[P, 5]`` logits for its
    ``(observation, progression, observation).edge_label_index`` pairs, in :data:`CLASSES` order.

    Raises:
        ValueError: unknown ``conv``, ``layers`` < 1 or a missing input size.
    """

    def __init__(self, in_dims: dict[str, int], hidden: int = 64, layers: int = 2, conv: str = "sage",
                 dropout: float = 0.1, heads: int = 2, pair_context: bool = True):
        super().__init__()
        if conv not in CONVS:
            raise ValueError(f"conv {conv!r}: choose one of {', '.join(CONVS)}")
        if layers < 1:
            raise ValueError(f"layers must be >= 1, got {layers}")
        missing = [t for t in NODE_TYPES if t not in in_dims]
        if missing:
            raise ValueError(f"in_dims lacks {', '.join(missing)}")
        self.encoders = nn.ModuleDict({t: nn.Linear(in_dims[t], hidden) for t in NODE_TYPES})
        self.convs = nn.ModuleList()
        metadata = (list(NODE_TYPES), list(EDGE_TYPES))
        for _ in range(layers):
            if conv == "hgt":
                self.convs.append(HGTConv(hidden, hidden, metadata, heads=heads))
            elif conv == "gat":
                self.convs.append(HeteroConv({et: GATConv((hidden, hidden), hidden // heads, heads=heads,
                                                          add_self_loops=False) for et in EDGE_TYPES}, aggr="sum"))
            else:
                self.convs.append(HeteroConv({et: SAGEConv((hidden, hidden), hidden) for et in EDGE_TYPES}, aggr="sum"))
        self.norms = nn.ModuleList([nn.ModuleDict({t: nn.LayerNorm(hidden) for t in NODE_TYPES}) for _ in range(layers)])
        self.dropout = nn.Dropout(dropout)
        self.pair_context = pair_context
        pair = [nn.Linear(4 * hidden, hidden), nn.ReLU(), nn.Dropout(dropout)]
        self.readout: nn.Module
        if pair_context:
            self.pair = nn.Sequential(*pair)
            self.readout = nn.Linear(4 * hidden, len(CLASSES))
        else:  # the layout of checkpoints from before the option
            self.readout = nn.Sequential(*pair, nn.Linear(hidden, len(CLASSES)))

    def forward(self, data) -> Tensor:
        x_dict = {t: self.encoders[t](data[t].x) for t in NODE_TYPES}
        edge_index_dict = {et: data[et].edge_index for et in EDGE_TYPES if et in data.edge_types}
        for conv, norms in zip(self.convs, self.norms, strict=True):
            assert isinstance(norms, nn.ModuleDict)  # one LayerNorm per node type (see __init__)
            out = conv(x_dict, edge_index_dict)
            x_dict = {t: norms[t](x_dict[t] + self.dropout(torch.relu(out[t]))) if t in out else x_dict[t]
                      for t in NODE_TYPES}
        h = x_dict["observation"]
        idx = data[LABEL_EDGE].edge_label_index
        hc, hp = h[idx[0]], h[idx[1]]
        pair = torch.cat([hc, hp, hc - hp, hc * hp], dim=-1)
        if not self.pair_context:
            return self.readout(pair)
        z = self.pair(pair)
        cur = idx[0]
        groups = [_target_of(data, ("observation", "located_at", "anatomy"), h.size(0))[cur],
                  _target_of(data, ("observation", "of_finding", "finding"), h.size(0))[cur],
                  _target_of(data, ("observation", "rev_has_observation", "study"), h.size(0))[cur]]
        return self.readout(torch.cat([z, *(_mean_of_others(z, g) for g in groups)], dim=-1))


def _target_of(data, edge_type: tuple[str, str, str], num_sources: int) -> Tensor:
    """``[num_sources]``: the target node of each source node's single edge of ``edge_type``."""
    src, dst = data[edge_type].edge_index
    out = torch.zeros(num_sources, dtype=torch.long, device=dst.device)
    out[src] = dst
    return out


def _mean_of_others(z: Tensor, group: Tensor) -> Tensor:
    """``[P, H]``: per row, the mean of ``z`` over the other rows of its group (zeros when alone)."""
    sums = scatter(z, group, dim=0, reduce="sum")
    counts = scatter(torch.ones_like(z[:, 0]), group, dim=0, reduce="sum")
    return (sums[group] - z) / (counts[group] - 1).clamp(min=1).unsqueeze(1)
