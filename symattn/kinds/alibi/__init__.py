"""alibi: attention with linear biases (Press et al., 2021)."""
