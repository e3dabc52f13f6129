"""norm."""
