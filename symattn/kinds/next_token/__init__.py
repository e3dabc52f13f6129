"""next token."""
