"""Repository tools (not installed): documentation generators."""
