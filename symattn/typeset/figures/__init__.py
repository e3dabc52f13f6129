"""The flow figures laid out as boxes and arrows on a grid (flow, blocks), and their geometry for TeX and SVG."""
