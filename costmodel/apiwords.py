"""The API's errors in its own words: one set of checks, two spellings.

The checks a question goes through speak the CLI's flags (``--alpha``, ``--zero 3``,
``--price-per-gpu-hour``): that is what a command-line user typed. A Python caller passed keyword
arguments instead, so the error it sees names those (``alpha_s``, ``zero_stage``,
``price_per_gpu_hour``); the class, the value and the reason stay. Each API entry gives its own
table of the flags whose keyword is not the flag's name with ``_`` for ``-``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from dpbase.errors import InputError

_FLAG = re.compile(r"--([a-z][a-z-]*)")
_NAME = re.compile(r"[a-z][a-z_-]*")


def _keyword(flag: str, keywords: Mapping[str, str]) -> str:
    """A CLI flag's name (no dashes) as the API's keyword argument."""
    return keywords.get(flag, flag.replace("-", "_"))


class UnknownKeywordError(InputError):
    """A keyword argument the API entry does not take: it names what the caller typed, which is
    never a CLI flag to rename (``alpha=`` was reported as ``alpha_s``, the keyword it lists as
    allowed; API audit, 2026-11-30)."""


def in_api_terms(error: InputError, keywords: Mapping[str, str]) -> InputError:
    """``error`` with the CLI's flags (``--alpha``, ``--no-pipeline``) written as the API's keywords
    (``alpha_s``, ``pipelined=False``); the same class, field, value and reason."""
    if isinstance(error, UnknownKeywordError):
        return error
    renamed = type(error).__new__(type(error))
    name = error.field.removeprefix("--")
    # a flag or a keyword; anything else (a profile's path and field) is kept as written: its
    # hyphens turned to underscores named a file and a profile that do not exist (API review)
    field = _keyword(name.replace("_", "-"), keywords) if _NAME.fullmatch(name) else error.field
    value = error.value
    if field.endswith("=False") and isinstance(value, bool):  # a negated switch: --no-pipeline given is pipelined=False
        value = not value
    InputError.__init__(renamed, field.removesuffix("=False"), value,
                        _FLAG.sub(lambda match: _keyword(match.group(1), keywords), error.allowed))
    return renamed


def speaks_keywords(keywords: Mapping[str, str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate an API entry: its :class:`InputError` names keywords, unless the CLI called it
    with ``_cli_words=True`` (then the flags stay)."""
    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        known = _keywords_of(function)

        @functools.wraps(function)
        def entry(*args: Any, _cli_words: bool = False, **kwargs: Any) -> Any:
            _check_keywords(function, known, kwargs)
            try:
                return function(*args, **kwargs)
            except InputError as error:
                if _cli_words:
                    raise
                raise in_api_terms(error, keywords) from None

        return entry

    return decorate


_VAR_KEYWORDS = 0x08  # CO_VARKEYWORDS: the code object takes **kwargs


def _keywords_of(function: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword arguments ``function`` takes, or None when it takes any (``**kwargs``). Read
    from its code object: ``inspect`` (and its ``ast``) stay off a single answer's imports."""
    code = getattr(function, "__code__", None)
    if code is None or code.co_flags & _VAR_KEYWORDS:
        return None
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return frozenset(names[code.co_posonlyargcount:])


def _check_keywords(function: Callable[..., Any], known: frozenset[str] | None, kwargs: Mapping[str, Any]) -> None:
    """A misspelt keyword (``nodez=2``), which was Python's TypeError, as an InputError naming it."""
    if known is None:
        return
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise UnknownKeywordError(unknown[0], kwargs[unknown[0]],
                                  f"a keyword of {function.__name__}: {', '.join(sorted(known))}")


def checks_keywords(function: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate an API entry whose errors already speak its keywords: a keyword it does not take
    is an InputError naming it (:func:`speaks_keywords` does this too)."""
    known = _keywords_of(function)

    @functools.wraps(function)
    def entry(*args: Any, **kwargs: Any) -> Any:
        _check_keywords(function, known, kwargs)
        return function(*args, **kwargs)

    return entry
