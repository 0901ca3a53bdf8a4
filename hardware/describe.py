"""Profiles out: plain dicts (for JSON) and TOML text (for user/calibrated profile files).

``to_dict`` keeps base units with the unit in the key (``bandwidth_Bps``). ``to_toml``
writes the same schema the loader reads, quantities as text with units, so that
``load_file`` of the written text gives back an equal profile.

    >>> from hardware import load_link
    >>> print(to_toml(load_link("ib-ndr")).splitlines()[0])
    [[link]]
"""

from __future__ import annotations

import math
from typing import Any

from dpbase.values import fields
from hardware.profiles import NO_LINK, Gpu, Link, MeasuredCurve, Profile, Regime, System

KIND_OF = {Gpu: "gpu", Link: "link", System: "system"}
GIGA = 1e9  # written quantities use GB, GB/s (a GPU's memory MiB, as nvidia-smi prints it)
MEBI = 2**20
MICRO = 1e-6  # written latencies use us
TERA = 1e12  # peak_tflops


def kind_of(profile: Profile) -> str:
    """``gpu``, ``link`` or ``system``."""
    return KIND_OF[type(profile)]


def to_dict(profile: Profile | Regime | MeasuredCurve) -> dict[str, Any]:
    """All fields in base units; a system's gpu, links and measured curves are nested dicts."""
    nested = isinstance(profile, (Regime, MeasuredCurve))
    result: dict[str, Any] = {"kind": kind_of(profile)} if not nested else {}
    for item in fields(profile):
        value = getattr(profile, item.name)
        if isinstance(value, (Gpu, Link, Regime)):
            value = to_dict(value)
        elif isinstance(value, tuple):  # names, a mesh's rows of link counts, or measured curves
            value = [item if isinstance(item, str) else list(item) if isinstance(item, tuple) else to_dict(item)
                     for item in value]
        elif item.name == "peak_flops":
            value = dict(value)
        result[item.name] = value
    if isinstance(profile, Link):
        result["achievable_bandwidth_Bps"] = profile.achievable_bandwidth_Bps
    if isinstance(profile, System):
        result["nic_bandwidth_per_gpu_Bps"] = profile.nic_bandwidth_per_gpu_Bps
        result["node_network_Bps"] = profile.node_network_Bps
        result["domain_gpus"] = profile.domain_gpus  # scaleup_domain_gpus as read (0: one node's GPUs)
    return result


def _number(value: float) -> str:
    return f"{value:.12g}"


def _memory(value_bytes: float) -> str:
    """A GPU's memory as the tools print it, in MiB (the bundled profiles' unit), exactly: a
    division by 2**20 loses no bits, and repr() is the shortest text that reads back the same."""
    return f'"{value_bytes / MEBI!r}MiB"'.replace(".0MiB", "MiB")


def _bandwidth(value_Bps: float) -> str:
    return f'"{_number(value_Bps / GIGA)}GB/s"'


def _quote(text: str) -> str:
    import json  # only when a profile is written out as TOML

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _common(profile: Profile) -> list[str]:
    lines = [f"name = {_quote(profile.name)}", f"description = {_quote(profile.description)}"]
    lines.append(f"source = {_quote(profile.source)}")
    return lines + ([f"notes = {_quote(profile.notes)}"] if profile.notes else [])


def _regime_lines(regime: Regime) -> list[str]:
    lines = ["", "[[link.regimes]]"]
    if not math.isinf(regime.max_size_bytes):
        lines.append(f'max_size = "{round(regime.max_size_bytes)}B"')  # whole bytes: a message is whole bytes
    lines.append(f'latency = "{_number(regime.latency_s / MICRO)}us"')
    return lines + [f"bandwidth = {_bandwidth(regime.bandwidth_Bps)}"] + (["flat = true"] if regime.flat else [])


def _link_lines(link: Link) -> list[str]:
    lines = ["[[link]]", *_common(link), f"category = {_quote(link.category)}"]
    lines += [f"bandwidth = {_bandwidth(link.bandwidth_Bps)}", f"efficiency = {_number(link.efficiency)}"]
    lines.append(f'latency = "{_number(link.latency_s / MICRO)}us"')
    lines += ["sharp = true"] if link.sharp else []
    lines += [] if link.gpu_direct is None else [f"gpu_direct = {str(link.gpu_direct).lower()}"]
    for regime in link.regimes:
        lines += _regime_lines(regime)
    return lines


def _gpu_lines(gpu: Gpu) -> list[str]:
    flops = ", ".join(f"{dtype} = {_number(value / TERA)}" for dtype, value in gpu.peak_flops.items())
    lines = ["[[gpu]]", *_common(gpu), f"vendor = {_quote(gpu.vendor)}", f"arch = {_quote(gpu.arch)}"]
    lines += [f"compute_capability = {gpu.compute_capability}", f"memory = {_memory(gpu.memory_bytes)}"]
    lines += [f"hbm_bandwidth = {_bandwidth(gpu.hbm_bandwidth_Bps)}", f"peak_tflops = {{ {flops} }}"]
    lines.append(f"scaleup_link = {_quote(gpu.scaleup_link.name if gpu.scaleup_link else NO_LINK)}")
    lines += [f"scaleup_bandwidth = {_bandwidth(gpu.scaleup_bandwidth_Bps)}", f"pcie_gen = {gpu.pcie_gen}"]
    if gpu.host_link_bandwidth_Bps:
        lines += [f"host_link_bandwidth = {_bandwidth(gpu.host_link_bandwidth_Bps)}"]
    lines += [f"default_mfu = {_number(gpu.default_mfu)}", f"mfu_source = {_quote(gpu.mfu_source)}"]
    if gpu.product_names:
        lines += [f"product_names = [{', '.join(_quote(name) for name in gpu.product_names)}]"]
    if gpu.matmul_ceiling is not None:
        lines += [f"matmul_ceiling = {_number(gpu.matmul_ceiling)}"]
    return lines


def _system_lines(system: System) -> list[str]:
    lines = ["[[system]]", *_common(system), f"gpu = {_quote(system.gpu.name)}"]
    lines += [f"gpus_per_node = {system.gpus_per_node}", f"intra_fabric = {_quote(system.intra_fabric)}"]
    lines += [f"nvswitch_gen = {system.nvswitch_gen}", f"intra_link = {_quote(system.intra_link.name)}"]
    lines += [f"intra_bandwidth = {_bandwidth(system.intra_bandwidth_Bps)}", f"nics_per_node = {system.nics_per_node}"]
    lines += [f"nic_link = {_quote(system.nic_link.name)}", f"nic_bandwidth = {_bandwidth(system.nic_bandwidth_Bps)}"]
    lines += [f"rail_optimized = {str(system.rail_optimized).lower()}"]
    lines += [f"in_network_reduction = {_quote(system.in_network_reduction)}"]
    lines += [f"oversubscription = {_number(system.oversubscription)}", f"cpu_vendor = {_quote(system.cpu_vendor)}"]
    lines += [f"p2p = {str(system.p2p).lower()}", f"scaleup_domain_gpus = {system.scaleup_domain_gpus}"]
    lines += [f"pcie_path = {_quote(system.pcie_path)}", f"pcie_switch_gpus = {system.pcie_switch_gpus}"]
    if system.host_memory_bandwidth_Bps:
        lines += [f"host_memory_bandwidth = {_bandwidth(system.host_memory_bandwidth_Bps)}"]
    if system.mesh_links:
        lines += [f"mesh_links = [{', '.join('[' + ', '.join(map(str, row)) + ']' for row in system.mesh_links)}]"]
    if system.instance_names:
        lines += [f"instance_names = [{', '.join(_quote(name) for name in system.instance_names)}]"]
    for curve in system.measured:
        lines += ["", "[[system.measured]]", f"collective = {_quote(curve.collective)}",
                  f"algorithm = {_quote(curve.algorithm)}", f"nodes = {curve.nodes}",
                  f"gpus_per_node = {curve.gpus_per_node}",
                  f'sizes = ["{_number(curve.min_size_bytes)}B", "{_number(curve.max_size_bytes)}B"]',
                  f"median_error = {_number(curve.median_error)}"]
        lines += [f"source = {_quote(curve.source)}"] if curve.source else []
        for regime in curve.regimes:
            lines += [line.replace("[[link.regimes]]", "[[system.measured.regimes]]") for line in _regime_lines(regime)]
    return lines


_WRITERS = {Gpu: _gpu_lines, Link: _link_lines, System: _system_lines}


def to_toml(*profiles: Profile) -> str:
    """TOML text defining ``profiles`` (a system's gpu/links are written by name only)."""
    blocks = ["\n".join(_WRITERS[type(profile)](profile)) for profile in profiles]
    return "\n\n".join(blocks) + "\n"


def standalone_toml(system: System) -> str:
    """TOML text a file can hold alone: ``system`` after the GPU and links it names that are not
    bundled under that name with the same values (a user file's own), which a system's entry
    names without defining."""
    from hardware.loader import bundled_catalog

    bundled = bundled_catalog()
    own = []
    for kind, profile in (("gpu", system.gpu), ("link", system.intra_link), ("link", system.nic_link),
                          ("link", system.gpu.scaleup_link)):
        if profile is not None and bundled.kind(kind).get(profile.name) != profile and profile not in own:
            own.append(profile)
    return to_toml(*own, system)
