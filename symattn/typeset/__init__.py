"""What every printer builds on, in every format: the renderer's base (dispatch by step type, settings, language
strings), the math renderer and its checkable lines, page layout and line breaking, and the flow figures' layout.
The kinds' printers import it; render/ (the formats) builds on it."""
