"""Tests of symattn.exam (this folder mirrors the package)."""
