"""What the attention kinds share and compose: their steps (scores, scaling, softmax, the weighted sum) laid out,
and their answers."""
