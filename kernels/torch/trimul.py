"""The triangle multiplicative update, outgoing (registry/ops/trimul.py), in torch as a user writes it."""
import torch
import torch.nn.functional as F

EPS = 1e-5


def trimul(x, mask, norm_in_weight, norm_in_bias, p_in_weight, g_in_weight, norm_out_weight, norm_out_bias,
           p_out_weight, g_out_weight):
    hidden = p_in_weight.shape[0] // 2
    z = F.layer_norm(x, (x.shape[-1],), norm_in_weight, norm_in_bias, EPS)
    ab = torch.sigmoid(z @ g_in_weight.T) * (z @ p_in_weight.T) * mask[..., None]
    t = torch.einsum("bikh,bjkh->bijh", ab[..., :hidden], ab[..., hidden:])
    t = F.layer_norm(t, (hidden,), norm_out_weight, norm_out_bias, EPS)
    return torch.sigmoid(z @ g_out_weight.T) * (t @ p_out_weight.T)
