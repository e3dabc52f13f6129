"""kv cache."""
