"""Hardware profiles for dpcost: GPUs, links and systems (nodes), bundled or user TOML.

    >>> import hardware
    >>> hardware.load_gpu("h100-sxm").memory_bytes  # 81090 MiB: what PyTorch sees of 80 GB HBM3
    85029027840.0
    >>> hardware.load_system("dgx-h100").intra_link.name
    'nvlink4-x18'
"""

from dpbase.lazy import lazy_exports as _lazy_exports

# Each name's module loads on first use: answering about one system does not import the TOML
# writer (hardware.describe) nor anything else it does not touch.
_EXPORTS = {
    "to_dict": "hardware.describe", "to_toml": "hardware.describe", "standalone_toml": "hardware.describe",
    **dict.fromkeys(("is_path", "list_profiles", "load_file", "load_gpu", "load_link", "load_profile",
                     "load_system", "validate_file"), "hardware.loader"),
    **dict.fromkeys(("gpu_of", "system_of"), "hardware.given"),
    **dict.fromkeys(("Gpu", "Link", "Profile", "Regime", "System"), "hardware.profiles"),
    "Catalog": "hardware.resolve",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
