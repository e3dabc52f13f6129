"""Tests of symattn.spec (this folder mirrors the package)."""
