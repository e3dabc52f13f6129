"""Worksheets' steps (blanks in place of a stage's results) and their printers, composed into every format."""
