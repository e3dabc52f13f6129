"""`python -m symattn`."""

from .cli import run

run()
