"""symattn's benchmark suite: `python -m bench` (ratios against baselines measured in the same run)."""
