"""numbers."""
