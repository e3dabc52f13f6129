"""Tests of symattn.render (this folder mirrors the package)."""
