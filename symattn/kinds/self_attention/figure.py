"""Self-attention's flow figure as data: the attention flow from X (with positional encodings, RoPE, a mask or a KV
cache as the section has them), captioned for the plain, the masked or the cached flow."""

from __future__ import annotations

from ...document.steps import FlowFigure
from ...features.attention import figure as attention
from ...spec.model import Section


def figure(section: Section) -> FlowFigure:
    """The figure of a self-attention section (its SelfAttentionSpec)."""
    mask = section.mask.mode if section.mask is not None else None
    cached, rope = section.cache is not None, section.rope is not None
    flavour = "masked" if mask else "self"
    drawing = attention.attention_flow(section.scale, mask, positions=section.positions is not None, rope=rope,
                                       cached=cached)
    return attention.figure(flavour, "figure.caption_cache" if cached else f"figure.caption_{flavour}", drawing, rope)
