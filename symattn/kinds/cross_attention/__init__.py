"""cross attention."""
