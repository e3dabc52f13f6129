"""What a kind needs to be examinable: the Exercise (a version's given inputs, its parts with points and answers),
the difficulty levels, the fairness checks and the drawing of random problems. exam/ drives them."""
