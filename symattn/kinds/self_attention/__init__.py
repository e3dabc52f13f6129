"""self attention."""
