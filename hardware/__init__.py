"""Hardware profiles for dpcost: GPUs, links and systems (nodes), bundled or user TOML.

    >>> import hardware
    >>> hardware.load_gpu("h100-sxm").memory_bytes
    80000000000.0
    >>> hardware.load_system("dgx-h100").intra_link.name
    'nvlink4-x18'
"""

from hardware.describe import to_dict, to_toml
from hardware.loader import (
    is_path,
    list_profiles,
    load_file,
    load_gpu,
    load_link,
    load_profile,
    load_system,
    validate_file,
)
from hardware.profiles import Gpu, Link, Profile, Regime, System
from hardware.resolve import Catalog

__all__ = [
    "Catalog",
    "Gpu",
    "Link",
    "Profile",
    "Regime",
    "System",
    "is_path",
    "list_profiles",
    "load_file",
    "load_gpu",
    "load_link",
    "load_profile",
    "load_system",
    "to_dict",
    "to_toml",
    "validate_file",
]
