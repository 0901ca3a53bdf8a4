"""A system given in Python, checked as a TOML file's entry would be.

A :class:`hardware.System` built in Python (``dataclasses.replace`` of a loaded one for a
what-if) was used unchecked: a NaN, zero or negative NIC bandwidth all answered 16.8 s for a
1 GiB all-reduce, a negative peak made a step faster (API review, 2026-11-29). Its fields are
written as TOML and read back by the loader, so one set of checks rules both. The loader's own
systems, and the copies the library makes of them (:func:`derived_system`), are taken as checked.
"""

from __future__ import annotations

import os
import re
from typing import Any

from dpbase.errors import InputError, ProfileError, is_real
from dpbase.values import fields, replace
from hardware.loader import _parse_toml, bundled_catalog, is_checked, load_gpu, load_system, mark_checked
from hardware.profiles import Gpu, System
from hardware.resolve import build_catalog


def derived_system(system: System, **changes: Any) -> System:
    """A copy of a checked ``system`` that the library itself makes (a what-if's scaled links, a
    rail's share of a node, a calibration's curves left out), taken as checked by
    :func:`system_of`: it need not be read back as a TOML entry (its name says what it is,
    "dgx-h100/rail", which no file may name)."""
    return mark_checked(replace(system, **changes))


def system_of(value: Any, field: str = "cluster", check: bool = True) -> System:
    """The system ``value`` names (a bundled name, a TOML path, a ``pathlib.Path``) or is (a
    :class:`hardware.System` built in Python, e.g. ``dataclasses.replace`` of a loaded one for a
    what-if), checked as a TOML file's entry would be (module docstring); the first problem is
    raised, naming the field. ``check=False``: the library's own copies (a what-if's scaled links, a rail's share), taken as
    they are.
    """
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return load_system(value)
    if not isinstance(value, System):
        raise InputError(field, value, "a system name, a TOML path or a hardware.System")
    if check:
        _ensure_checked(value, field)
        mark_checked(value.gpu)  # checked with it
    return value


def gpu_of(value: Any, field: str = "gpu") -> Gpu:
    """The GPU ``value`` names (a bundled name, a TOML path) or is (a :class:`hardware.Gpu` built in
    Python), checked as :func:`system_of` checks a system: a GPU with negative peaks made a step
    faster (review of 2026-11-29's change)."""
    if isinstance(value, (str, os.PathLike)):
        return load_gpu(value)
    if not isinstance(value, Gpu):
        raise InputError(field, value, "a GPU name, a TOML path or a hardware.Gpu")
    return _ensure_checked(value, field)


def _ensure_checked(profile: System | Gpu, field: str) -> Any:
    """``profile``, checked once (:func:`_check_built`) unless it was loaded or checked already."""
    if not is_checked(profile):
        _check_built(profile, field)
        mark_checked(profile)
    return profile


# The name a profile built in Python is written under: its own need not be a file's kebab-case
# name ("dgx-1-1x100G"), a TOML file's rule, not the formulas'.
_WRITTEN_NAME = "built-in-python"


def _text(profile: System | Gpu) -> str:
    """The TOML of ``profile`` under :data:`_WRITTEN_NAME`, with the GPU and links it names that
    are not bundled under that name with the same values."""
    from hardware.describe import standalone_toml, to_toml

    written = replace(profile, name=_WRITTEN_NAME)
    if isinstance(profile, System):
        return standalone_toml(written)
    link = profile.scaleup_link
    own = link is not None and bundled_catalog().kind("link").get(link.name) != link
    return to_toml(*([link] if own else []), written)


def _owner(profile: System | Gpu, entry: str) -> str:
    """The attribute path of the profile a problem's TOML entry (``gpus[0] (h100-sxm)``) belongs to."""
    table = entry.split("[")[0]
    gpu = profile.gpu if isinstance(profile, System) else profile
    if table == "gpus":
        return "gpu." if isinstance(profile, System) else ""
    links = (("intra_link", profile.intra_link), ("nic_link", profile.nic_link)) if isinstance(profile, System) else ()
    links += (("gpu.scaleup_link" if isinstance(profile, System) else "scaleup_link", gpu.scaleup_link),)
    return next((f"{attr}." for attr, link in links if link is not None and entry.endswith(f"({link.name}")), "")


def _check_built(profile: System | Gpu, field: str) -> None:
    """Write ``profile`` as TOML and read it back; the first problem raised, named by the Python
    attribute that holds it (``cluster ('x').gpu.peak_tflops.bf16``)."""
    kind, name = ("system" if isinstance(profile, System) else "gpu"), profile.name
    try:
        text = _text(profile)
    except (TypeError, ValueError, AttributeError):  # a field of the wrong kind altogether: named if it can be
        path, value, wanted = _mistyped_field(profile)
        raise ProfileError(f"{field} ({name!r}){path}", value if path else "a field of the wrong type",
                           f"{wanted}, as hardware.{type(profile).__name__} holds it (see hardware.profiles)"
                           if path else f"a hardware.{type(profile).__name__} whose fields a TOML profile can hold "
                           "(see hardware.profiles)") from None
    try:
        document = _parse_toml(text, f"hardware.{type(profile).__name__} {name!r}")
    except ProfileError as error:  # a value TOML cannot hold (True, None): name its line's key
        line = re.search(r"at line (\d+)", str(error.value))
        written = text.splitlines()[int(line.group(1)) - 1] if line else ""
        key, _, value = written.partition("=")
        raise ProfileError(f"{field} ({name!r}).{key.strip() or 'fields'}", value.strip() or error.value,
                           "a value of the field's type, as a TOML profile holds it") from None
    catalog, problems = build_catalog(document, bundled_catalog())
    if problems:
        first = problems[0]
        entry, _, where = first.field.partition(").")
        raise ProfileError(f"{field} ({name!r}).{_owner(profile, entry)}{where or first.field}", first.value,
                           first.allowed)
    differs = _difference(profile, replace(catalog.kind(kind)[_WRITTEN_NAME], name=name))
    if differs:  # read back otherwise: a value of another type ("8" for 8), which the formulas would not take
        where, value, read = differs
        raise ProfileError(f"{field} ({name!r}).{where}", value, f"a value a profile holds, e.g. {read!r}")


def _difference(given: Any, read: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The first field (dotted path) where a profile built in Python and the one read back from
    its TOML differ: (path, given value, value read), or None. A number is any number there (the
    writer rounds a calibration's fitted curves; the loader checked its range); every other value
    must be read back as itself, of its type ("8" for 8 is not)."""
    if hasattr(type(given), "__value_fields__") and type(given) is type(read):
        pairs = [(f"{where}.{item.name}".lstrip("."), getattr(given, item.name), getattr(read, item.name))
                 for item in fields(given)]
    elif isinstance(given, (tuple, list)) and isinstance(read, (tuple, list)) and len(given) == len(read):
        pairs = [(f"{where}[{i}]", a, b) for i, (a, b) in enumerate(zip(given, read))]
    elif hasattr(given, "keys") and hasattr(read, "keys") and set(given.keys()) == set(read.keys()):
        pairs = [(f"{where}.{key}", given[key], read[key]) for key in given.keys()]
    elif is_real(given) and is_real(read):  # a number: its range is the loader's to check (done)
        return None
    else:
        return None if type(given) is type(read) and given == read else (where, given, read)
    return next((found for path, a, b in pairs if (found := _difference(a, b, path))), None)


def _mistyped_field(profile: object, prefix: str = "") -> tuple[str, object, str]:
    """(``.attribute.path``, its value, the type wanted) of the first number field holding a
    string, None or another non-number (``nic_bandwidth_Bps="8"``), looking into the GPU of a
    system; ("", None, "") when none is found that way."""
    import dataclasses

    if not dataclasses.is_dataclass(profile):
        return "", None, ""
    for f in dataclasses.fields(profile):
        value, wanted = getattr(profile, f.name), str(f.type)
        if dataclasses.is_dataclass(value) and f.name == "gpu":
            found = _mistyped_field(value, f"{prefix}.{f.name}")
            if found[0]:
                return found
            continue
        numeric = wanted.split("|")[0].strip() in ("float", "int")
        if numeric and (isinstance(value, (str, bool)) or (value is None and "None" not in wanted)
                        or not isinstance(value, (int, float))):
            return f"{prefix}.{f.name}", value, f"a number ({wanted})"
    return "", None, ""
