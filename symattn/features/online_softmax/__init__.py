"""online softmax."""
