"""The input side: exact numbers from their text (numbers), the spec model (model), the validation of its fields
(fields) and reading spec files and examples (files). A section's own type and keys belong to its kind."""
