"""attention."""
