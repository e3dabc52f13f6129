"""The exams' drawing helpers make exactly the draws of the plain random calls they stand for: every seed's
versions depend on it."""

import random

from symattn.exercises.levels import random_matrix


def test_random_matrix_draws_as_choice():
    for seed in range(20):
        for size in range(1, 11):
            values = tuple(str(v) for v in range(size))
            fast, plain = random.Random(seed), random.Random(seed)
            rows, cols = 1 + seed % 4, 1 + size % 5
            assert random_matrix(fast, rows, cols, values) == [[plain.choice(values) for _ in range(cols)]
                                                               for _ in range(rows)]
            assert fast.getstate() == plain.getstate()
