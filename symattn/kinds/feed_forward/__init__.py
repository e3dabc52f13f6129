"""feed forward."""
