"""Sliding-window attention (Longformer, Mistral): self-attention in which each query sees only the last w keys."""
