"""Shell completion of values: profile names, model presets, primitives and algorithms.

Installed with ``dpcost --install-completion`` (bash, zsh, fish, PowerShell). Each function
takes what the user has typed so far and returns the matching names; a path to a TOML file
is always accepted where a profile name is, and the shell completes paths itself.
"""

from __future__ import annotations

from typing import Any


def _matching(names: list[str] | tuple[str, ...], incomplete: str) -> list[str]:
    return [name for name in names if name.startswith(incomplete)]


def systems(incomplete: str) -> list[str]:
    from hardware import list_profiles

    return _matching([p.name for p in list_profiles("system")], incomplete)


def profiles(incomplete: str) -> list[str]:
    from hardware import list_profiles

    return _matching([p.name for p in list_profiles()], incomplete)


def links(incomplete: str) -> list[str]:
    from hardware import list_profiles

    return _matching([p.name for p in list_profiles("link")], incomplete)


def models(incomplete: str) -> list[str]:
    from costmodel.training.workloads import model_aliases, model_names

    return _matching([*model_names(), *model_aliases()], incomplete)


def primitives(incomplete: str) -> list[str]:
    from costmodel.names import Primitive

    return _matching([p.value for p in Primitive], incomplete)


def algorithms(ctx: Any, incomplete: str) -> list[str]:
    """The algorithms of the primitive already typed (all of them before it), and ``auto``."""
    from costmodel.collectives.registry import algorithms_for
    from costmodel.names import Algorithm, primitive_named

    primitive = (ctx.params or {}).get("primitive") if ctx is not None else None
    try:
        names = [a.value for a in algorithms_for(primitive_named(primitive))] if primitive else [a.value for a in Algorithm]
    except Exception:  # an unknown primitive typed so far: offer every algorithm
        names = [a.value for a in Algorithm]
    return _matching(["auto", *names], incomplete)
