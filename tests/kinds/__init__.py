"""Tests of symattn.kinds (this folder mirrors the package)."""
