"""`symattn worksheet`: a derivation with chosen stages left blank (and its key), paper and self-check page."""
