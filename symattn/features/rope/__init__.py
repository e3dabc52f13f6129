"""rope."""
