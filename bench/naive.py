"""The obvious implementation, kept as the baseline: sympy.Matrix with Rationals, exact softmax, evalf at the end."""

from __future__ import annotations

import numpy as np
from sympy import Matrix, exp, sqrt


def naive_attention(X: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix) -> Matrix:
    """softmax(QKᵀ/√d_k)·V for every token, exactly, then evaluated to 15 digits."""
    Q, K, V = X * W_Q, X * W_K, X * W_V
    S = (Q * K.T) / sqrt(W_K.cols)
    A = Matrix(S.rows, S.cols, lambda i, j: exp(S[i, j]) / sum(exp(S[i, k]) for k in range(S.cols)))
    return (A * V).evalf(15)


def numpy_attention(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray) -> np.ndarray:
    """The same in float64."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / np.sqrt(W_K.shape[1])
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return (A / A.sum(axis=1, keepdims=True)) @ V
