"""The backward pass of self-attention: exact gradients, step by step (kinds/backward/kind.py)."""
