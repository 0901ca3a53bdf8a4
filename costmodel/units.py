"""Units at the edges (owned by :mod:`dpbase.units`), under the path the docs teach."""

from dpbase.units import (
    BANDWIDTH_ALLOWED,
    SIZE_ALLOWED,
    TIME_ALLOWED,
    format_bandwidth,
    format_size,
    format_time,
    parse_bandwidth,
    parse_size,
    parse_time,
)

__all__ = ["BANDWIDTH_ALLOWED", "SIZE_ALLOWED", "TIME_ALLOWED", "format_bandwidth", "format_size", "format_time",
           "parse_bandwidth", "parse_size", "parse_time"]
