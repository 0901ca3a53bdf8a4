"""A command line parsed from the commands' declarations (:mod:`costmodel.commands.options`).

:func:`parse` answers only where it is certain to give what click would: every token a known
option with its value, or an argument, and every value convertible. For anything else (``--help``,
an unknown or misspelt option, a missing value, ``-N8``, ``--``, a bad number, a missing
required option) it returns None and the command line goes to click, which prints its usage
error or help as always. tests/commands/test_cli_fast_path.py checks that both give the same
values for every parameter of every command.

    >>> from typing import Annotated
    >>> from costmodel.commands.options import Option
    >>> def run(ranks: Annotated[int, Option("--ranks", "-N")], json_: Annotated[bool, Option("--json")] = False): ...
    >>> parse(run, ["-N", "8", "--json"])
    {'ranks': 8, 'json_': True}
    >>> parse(run, ["-N8"]) is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costmodel.commands.options import ParameterSpec, parameter_specs

_REFUSED = object()


def _convert(spec: ParameterSpec, text: str) -> Any:
    """The value click's type would give, or ``_REFUSED`` where click would report an error."""
    try:
        return spec.convert(text)
    except ValueError:
        return _REFUSED


def parse(function: Any, args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments click would call ``function`` with for ``args``, or None."""
    specs = parameter_specs(function)
    if not all(spec.plain for spec in specs):
        return None
    switches: dict[str, tuple[ParameterSpec, bool]] = {}
    for spec in specs:
        switches.update(dict.fromkeys(spec.switches, (spec, True)))
        switches.update(dict.fromkeys(spec.off_switches, (spec, False)))
    values: dict[str, Any] = {}
    texts: list[str] = []
    position = 0
    while position < len(args):
        token = args[position]
        position += 1
        if token[:1] != "-" or token == "-":
            texts.append(token)
            continue
        name, equals, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        found = switches.get(name)
        if found is None:
            return None
        spec, on = found
        if spec.is_flag:
            if equals:
                return None
            values[spec.name] = on
            continue
        if not equals:
            if position == len(args):
                return None
            attached = args[position]
            position += 1
        value = _convert(spec, attached)
        if value is _REFUSED:
            return None
        values[spec.name] = value
    arguments = [spec for spec in specs if spec.positional]
    if len(texts) > len(arguments):
        return None
    for spec, text in zip(arguments, texts):
        value = _convert(spec, text)
        if value is _REFUSED:
            return None
        values[spec.name] = value
    for spec in specs:
        if spec.name not in values:
            if spec.required:
                return None
            values[spec.name] = spec.default
    return {spec.name: values[spec.name] for spec in specs}



def repeated_option(function: Any, args: Sequence[str]) -> tuple[str, list[str]] | None:
    """(the option as typed, its values) of the first list option (one whose help says it takes
    comma-separated values) given twice, or None. click keeps the last silently, so `sweep
    --algorithm ring --algorithm tree` gave the tree rows alone (API review, 2026-11-30): a user
    who repeats a list option means both. Any other option keeps click's last-one-wins, the
    convention an alias with defaults (`alias dp='dpcost iteration --cluster dgx-h100'`) leans on."""
    switches = {switch: spec.name for spec in parameter_specs(function) if spec.listed for switch in spec.switches}
    seen: dict[str, list[str]] = {}
    typed: dict[str, str] = {}
    position = 0
    while position < len(args):
        token = args[position]
        position += 1
        if token == "--":
            break
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if not token.startswith("--") and len(token) > 2 and token[:2] in switches:  # -aring: -a's value attached
            name, equals, value = token[:2], "=", token[2:]
        owner = switches.get(name)
        if owner is None:
            continue
        if not equals:
            if position == len(args):  # no value: click says the option needs one
                break
            value = args[position]
            position += 1
        seen.setdefault(owner, []).append(value)
        typed.setdefault(owner, name)
        if len(seen[owner]) > 1:
            return typed[owner], seen[owner]
    return None
