"""The triangle multiplicative update as a user of cuEquivariance calls it: its fused kernels (LayerNorm, the gated
projections and the contraction in Triton programs of its own), FP32 in and out, every product as three TF32
products (its TF32x3 mode: the precision of our kernels; its IEEE mode refuses a hidden width other than the pair
width). Its tile configurations are the ones the package ships for the GPU, as a user gets them by default
(tuning a shape of one's own is opt-in, CUEQ_TRITON_TUNING, and takes minutes to hours)."""
from cuequivariance_torch import TriMulPrecision, triangle_multiplicative_update

EPS = 1e-5


def trimul(x, mask, norm_in_weight, norm_in_bias, p_in_weight, g_in_weight, norm_out_weight, norm_out_bias,
           p_out_weight, g_out_weight):
    return triangle_multiplicative_update(
        x, "outgoing", mask=mask, norm_in_weight=norm_in_weight, norm_in_bias=norm_in_bias,
        p_in_weight=p_in_weight, g_in_weight=g_in_weight, norm_out_weight=norm_out_weight,
        norm_out_bias=norm_out_bias, p_out_weight=p_out_weight, g_out_weight=g_out_weight, eps=EPS,
        precision=TriMulPrecision.TF32x3)
