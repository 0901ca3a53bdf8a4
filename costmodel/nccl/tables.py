"""NCCL's tuning constants as data: load the bundled table, apply a version or a user override.

The bundled file ``costmodel/data/nccl_2_30_7.toml`` holds every constant table of NCCL
2.30.7's tuning model (``ncclTunerConstantsDefaults``), each with its source. A user TOML with
the same layout overrides single entries, the way an NCCL tuner plugin edits
``ncclTunerConstants_t``; ``version = "2.21.5"`` applies the bundled differences of an older
release first. Unknown keys or wrong types are rejected with the dotted field name.

    >>> tables = load_tables()
    >>> tables.base_latency_us("ring", "LL")
    6.6
    >>> load_tables(overrides={"base_latency_us": {"ring": {"ll": 5.0}}}).base_latency_us("ring", "LL")
    5.0
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dpbase.bundled import load_bundled
from dpbase.errors import InputError, ProfileError, UnknownNameError
from dpbase.values import frozen

DEFAULT_TABLES_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "nccl_2_30_7.toml")
DEFAULT_VERSION = "2.30.7"
NODE_COLUMNS = ("one_node", "two_nodes", "more_nodes")
PROTO_KEYS = {"LL": "ll", "LL128": "ll128", "Simple": "simple"}
_FREE_TEXT_KEYS = ("source",)
# NCCL_P2P_LEVEL values, nearest first (NCCL's PATH_* order: LOC = no P2P at all, NVL = NVLink
# only, then the PCIe distances).
P2P_LEVELS = ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS")
# What a user's value may be, by field (dotted path), beyond "a finite number >= 0" (patterns
# compiled only when a user's value is checked: compiling them costs every start-up ~1 M instructions):
# the model divides by these (a zero would divide by zero) ...
_DIVISOR = (r"(^|\.)(efficiency_\w+|\w+_divisor|tree_correction_factor\.\w+|search_speeds_GBps\.sm\d+_\w+"
            r"|search_speeds_GBps\.(nvls_)?max_channels|link_bandwidth_GBps\.[\w.]+|arch_caps_GBps\.[\w.]+)$")
# ... these are latencies, at most a second each (1e308 µs printed inf in the tables; an audit) ...
_LATENCY = r"(^|\.)(hw_latency_us|base_latency_us|net_overhead_us)\.[\w.]+$"
MAX_LATENCY_US = 1e6
# ... these are shares of a bandwidth NCCL can reach (above 1 the model would outrun the links) ...
_FRACTION = r"(^|\.)(efficiency_\w+|nvls_efficiency\.\w+|tree_correction_factor\.\w+)$"
# ... and NCCL's versions set this offset of nInterSteps = 2·(nNodes − offset) to 0 or 1 only.
_CHOICES = {"refinements.allreduce_inter_steps_offset": ((0, 1), "as NCCL's versions set it"),
            # ... and a P2P level is one of NCCL_P2P_LEVEL's (another was a ValueError traceback)
            "p2p_level.default": (P2P_LEVELS, "NCCL_P2P_LEVEL's values"),
            "p2p_level.amd_few_gpus": (P2P_LEVELS, "NCCL_P2P_LEVEL's values")}


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _same_kind(default: Any, new: Any) -> bool:
    if isinstance(default, bool) or isinstance(new, bool):
        return isinstance(default, bool) and isinstance(new, bool)
    if isinstance(default, (int, float)):
        return isinstance(new, (int, float))
    return isinstance(new, type(default))


def merge_override(base: Mapping[str, Any], override: Mapping[str, Any], path: str = "") -> dict:
    """Return ``base`` with ``override`` applied; every overridden key must exist in ``base``.

    Raises ProfileError naming the dotted field for an unknown key, a wrong type, a list of
    the wrong length or a negative number.
    """
    merged = dict(base)
    for key, new in override.items():
        field = f"{path}{key}"
        if key not in base:
            raise ProfileError(field, new, f"a key of the NCCL tables: {', '.join(sorted(base))}")
        default = base[key]
        if isinstance(default, Mapping):
            if not isinstance(new, Mapping):
                raise ProfileError(field, new, "a table")
            merged[key] = merge_override(default, new, f"{field}.")
            continue
        _check_leaf(field, default, new)
        merged[key] = new
    return merged


def _check_leaf(field: str, default: Any, new: Any) -> None:
    if not _same_kind(default, new):
        raise ProfileError(field, new, f"a value of type {type(default).__name__}")
    if field in _CHOICES and new not in _CHOICES[field][0]:
        values, why = _CHOICES[field]
        raise ProfileError(field, new, ", ".join(map(str, values[:-1])) + f" or {values[-1]} ({why})")
    numbers = new if isinstance(default, list) else [new]
    if isinstance(default, list) and len(new) != len(default):
        raise ProfileError(field, new, f"a list of {len(default)} numbers")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        if isinstance(default, list):
            raise ProfileError(field, new, "finite non-negative numbers")
        return  # text and flags: their type was checked
    divisor, fraction = bool(re.search(_DIVISOR, field)), bool(re.search(_FRACTION, field))
    latency = bool(re.search(_LATENCY, field))
    low = "> 0 (dpcost divides by it)" if divisor else ">= 0"
    high = (", at most 1 (a share of what the links carry)" if fraction
            else f", at most {MAX_LATENCY_US:g} µs (a second)" if latency else "")
    allowed = f"{'finite numbers' if isinstance(default, list) else 'a finite number'} {low}{high}"
    if any(not math.isfinite(v) or v < 0 or (v == 0 and divisor) or (fraction and v > 1)
           or (latency and v > MAX_LATENCY_US) for v in numbers):
        raise ProfileError(field, new, allowed)


@frozen
class NcclTables:
    """Every constant of NCCL's tuning model, read-only, with typed accessors."""

    data: Mapping[str, Any]
    version: str

    def base_latency_us(self, algo: str, proto: str) -> float:
        """``baseLatencies[algo][proto]`` in µs."""
        return float(self.data["base_latency_us"][algo][PROTO_KEYS[proto]])

    def hw_latency_us(self, hw: str, algo: str, proto: str) -> float:
        """``hwLatencies[hw][algo][proto]`` in µs; ``hw`` is nvlink, pci or net."""
        return float(self.data["hw_latency_us"][hw][algo][PROTO_KEYS[proto]])

    def arch_cap_GBps(self, table: str, arch: str, n_nodes: int) -> float:
        """A per-architecture cap (``ll_max``, ``per_channel_tree`` …) for ``n_nodes``."""
        column = NODE_COLUMNS[min(n_nodes, 3) - 1]
        return float(self.data["arch_caps_GBps"][table][arch][column])

    def nvls_efficiency(self, arch: str) -> float:
        """``nvlsEfficiency[arch]``."""
        return float(self.data["nvls_efficiency"][arch])

    def tree_correction(self, proto: str) -> tuple[float, ...]:
        """``treeCorrectionFactor[proto]`` indexed by log2(nBytes/64)."""
        return self.data["tree_correction_factor"][PROTO_KEYS[proto]]

    def refinement(self, name: str) -> Any:
        """One named factor of ``[refinements]``."""
        return self.data["refinements"][name]

    def net_overhead_us(self, cpu_vendor: str) -> float:
        """``NCCL_NET_OVERHEAD`` default for a CPU vendor (not yet tripled for Simple)."""
        table = self.data["net_overhead_us"]
        return float(table.get(cpu_vendor, table["other"]))

    def section(self, name: str) -> Mapping[str, Any]:
        """A whole table (``link_bandwidth_GBps``, ``search_speeds_GBps`` …)."""
        return self.data[name]


def _read_toml(path: str, field: str) -> dict:
    import tomllib  # only when a user's file is read (the bundled table comes through dpbase.bundled)

    from dpbase.readfile import read_text

    text = read_text(path, field, "a readable UTF-8 TOML file", error_type=ProfileError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(field, str(path), f"valid TOML ({error})") from None
    except RecursionError:
        raise ProfileError(field, str(path), "TOML without deeply nested arrays or tables") from None


def _bundled() -> dict:
    """A fresh dict of the bundled tables (:mod:`dpbase.bundled`: parsed once per installation)."""
    return load_bundled(DEFAULT_TABLES_PATH)


def tables_or_default(tables: object) -> NcclTables:
    """``tables`` as given, or the bundled default for None; anything else (``tables=5``, an
    AttributeError deep in the search or the model; API audit, 2026-11-30) refused by name. The
    check of every API entry that takes NCCL's tables."""
    if tables is None:
        return load_tables()
    if not isinstance(tables, NcclTables):
        raise InputError("tables", tables, "NCCL's tables (costmodel.nccl.load_tables(), or a --tuning TOML's), or None")
    return tables


def load_tables(
    tuning_path: str | os.PathLike[str] | None = None,
    *,
    version: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> NcclTables:
    """Load NCCL's constants: bundled 2.30.7, then ``version``'s differences, then user overrides.

    ``tuning_path`` is a user TOML; it may set ``version = "2.21.5"`` at top level. ``overrides``
    is the same content as a dict (applied after the file). The bundled default (no argument)
    is parsed once per process: every NCCL-mode call without user tables shares it.
    """
    if tuning_path is None and version is None and not overrides:
        return _default_tables()
    return _build(tuning_path, version, overrides)


@functools.cache
def _default_tables() -> NcclTables:
    return _build(None, None, None)


def _build(tuning_path: str | os.PathLike[str] | None, version: str | None, overrides: Mapping[str, Any] | None) -> NcclTables:
    raw = _bundled()
    versions = raw.pop("versions")
    user = _read_toml(os.fspath(tuning_path), "tuning") if tuning_path is not None else {}
    if tuning_path is not None and not _sets_something(user):  # an empty file would silently change nothing
        raise ProfileError(f"tuning ({os.fspath(tuning_path)})", "no settings",
                           'a version (e.g. version = "2.27.5") or at least one NCCL constant to override '
                           '(e.g. [base_latency_us.ring] ll = 5.0)')
    written = user.pop("version", None)
    if version is not None and written is not None and str(written) != version:  # one was silently dropped
        raise InputError("nccl_version", version, f"the version the tuning file {os.fspath(tuning_path)} sets "
                         f"({written}), or leave one of them out")
    chosen = version if version is not None else (written or DEFAULT_VERSION)
    if chosen != DEFAULT_VERSION:
        if chosen not in versions:
            raise UnknownNameError("version", chosen, [DEFAULT_VERSION, *versions])
        delta = {k: v for k, v in versions[chosen].items() if k not in _FREE_TEXT_KEYS}
        raw = merge_override(raw, delta)
    raw = merge_override(raw, user)
    raw = merge_override(raw, dict(overrides or {}))
    return NcclTables(data=_freeze(raw), version=str(chosen))


def _sets_something(document: Mapping[str, Any]) -> bool:
    """Whether a tuning document sets any value: a key outside a table, not only empty tables."""
    return any(not isinstance(value, Mapping) or _sets_something(value) for value in document.values())


def known_versions() -> tuple[str, ...]:
    """The NCCL versions whose constants are bundled."""
    return (DEFAULT_VERSION, *_bundled()["versions"].keys())

