"""grouped query."""
