"""Tests of symattn (this folder mirrors the package)."""
