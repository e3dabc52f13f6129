"""The flow figures' pieces (boxes), their layout and geometry (flow) for TeX and SVG; the kinds build the figures."""
