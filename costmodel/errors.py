"""The error tree (owned by :mod:`dpbase.errors`), under the path the docs teach."""

from dpbase.errors import (
    DpcostError,
    InputError,
    NotApplicableError,
    ParseError,
    ProfileError,
    UnitError,
    UnknownNameError,
)

__all__ = ["DpcostError", "InputError", "NotApplicableError", "ParseError", "ProfileError", "UnitError",
           "UnknownNameError"]
