"""multi head."""
