"""Tests of symattn.engine (this folder mirrors the package)."""
