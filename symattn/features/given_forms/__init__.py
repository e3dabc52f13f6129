"""given forms."""
