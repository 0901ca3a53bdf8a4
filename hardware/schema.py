"""The profile TOML schema as data: which keys each table has, how each is parsed.

A TOML file holds arrays of tables ``[[gpu]]``, ``[[link]]``, ``[[system]]``. Each key maps
to one attribute of :class:`~hardware.profiles.Gpu`, ``Link`` or ``System`` through a
parser from :mod:`hardware.fields`. References to other profiles (``gpu``, ``intra_link``,
``nic_link``, ``scaleup_link``) are parsed as names here and resolved by
:mod:`hardware.resolve`.
"""

from __future__ import annotations

from typing import Any

from dpbase.errors import ProfileError
from dpbase.values import frozen
from hardware import fields
from hardware.profiles import (
    ARCHITECTURES,
    CPU_VENDORS,
    IN_NETWORK_REDUCTIONS,
    INTRA_FABRICS,
    LINK_CATEGORIES,
    PCIE_PATHS,
)

_MISSING = object()


@frozen
class FieldSpec:
    """One TOML key: its attribute name, parser, and default (``_MISSING`` = required)."""

    key: str
    attr: str
    parse: fields.Parser
    default: Any = _MISSING
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is _MISSING


def _common() -> tuple[FieldSpec, ...]:
    return (
        FieldSpec("name", "name", fields.kebab_name, help="kebab-case id"),
        FieldSpec("description", "description", fields.nonempty_text, help="one line for people"),
        FieldSpec("source", "source", fields.nonempty_text, help="where the numbers come from"),
        FieldSpec("notes", "notes", fields.text, "", help="optional remarks"),
    )


LINK_FIELDS = _common() + (
    FieldSpec("category", "category", fields.choice(LINK_CATEGORIES)),
    FieldSpec("bandwidth", "bandwidth_Bps", fields.bandwidth, help="nominal, per direction"),
    FieldSpec("efficiency", "efficiency", fields.fraction, help="achievable fraction of bandwidth"),
    FieldSpec("latency", "latency_s", fields.duration, help="one-way small-message latency"),
    FieldSpec("sharp", "sharp", fields.boolean, False, help="fabric can reduce in-network"),
    FieldSpec("gpu_direct", "gpu_direct", fields.boolean, None,
              help="the NIC reads and writes GPU memory (GPUDirect); default by category"),
    FieldSpec("regimes", "regimes", fields.regimes, (), help="calibrated pieces by size"),
)

GPU_FIELDS = _common() + (
    FieldSpec("vendor", "vendor", fields.choice(("nvidia", "amd"))),
    FieldSpec("arch", "arch", fields.choice(ARCHITECTURES)),
    FieldSpec("compute_capability", "compute_capability", fields.integer(0, 200),
              help="CUDA SM version x10 (80 = sm_80); 0 for AMD"),
    FieldSpec("memory", "memory_bytes", fields.size),
    FieldSpec("hbm_bandwidth", "hbm_bandwidth_Bps", fields.bandwidth),
    FieldSpec("peak_tflops", "peak_flops", fields.peak_tflops, help="dense TFLOP/s per dtype"),
    FieldSpec("scaleup_link", "scaleup_link", fields.kebab_name, help='link name or "none"'),
    FieldSpec("scaleup_bandwidth", "scaleup_bandwidth_Bps", fields.bandwidth_or_zero, 0.0,
              help="per GPU per direction over the scale-up link"),
    FieldSpec("pcie_gen", "pcie_gen", fields.integer(1, 7)),
    FieldSpec("host_link_bandwidth", "host_link_bandwidth_Bps", fields.bandwidth_or_zero, 0.0,
              help="per GPU per direction to host memory over a CPU-GPU link that is not PCIe "
                   "(NVLink-C2C); 0 = the x16 PCIe link of pcie_gen"),
    FieldSpec("default_mfu", "default_mfu", fields.fraction),
    FieldSpec("mfu_source", "mfu_source", fields.nonempty_text),
    FieldSpec("product_names", "product_names", fields.text_list, (),
              help="names the part is reported under that state another memory than its own "
                   "(nvidia-smi's 'NVIDIA GH200 120GB': the Grace's 120 GB)"),
    FieldSpec("matmul_ceiling", "matmul_ceiling", fields.fraction, None,
              help="largest measured 16-bit matmul FLOP/s over the dense peak (MAMF); default A100 SXM's 0.859"),
)

SYSTEM_FIELDS = _common() + (
    FieldSpec("gpu", "gpu", fields.kebab_name, help="a gpu name"),
    FieldSpec("gpus_per_node", "gpus_per_node", fields.integer(1, 1024)),
    FieldSpec("intra_fabric", "intra_fabric", fields.choice(INTRA_FABRICS)),
    FieldSpec("nvswitch_gen", "nvswitch_gen", fields.integer(0, 9), help="0 = no NVSwitch"),
    FieldSpec("intra_link", "intra_link", fields.kebab_name, help="a link name"),
    FieldSpec("intra_bandwidth", "intra_bandwidth_Bps", fields.bandwidth, help="per GPU per direction"),
    FieldSpec("nics_per_node", "nics_per_node", fields.integer(1, 1024)),
    FieldSpec("nic_link", "nic_link", fields.kebab_name, help="a link name"),
    FieldSpec("nic_bandwidth", "nic_bandwidth_Bps", fields.bandwidth, help="per NIC per direction"),
    FieldSpec("rail_optimized", "rail_optimized", fields.boolean),
    FieldSpec("in_network_reduction", "in_network_reduction", fields.choice(IN_NETWORK_REDUCTIONS)),
    FieldSpec("oversubscription", "oversubscription", fields.at_least_one, 1.0),
    FieldSpec("cpu_vendor", "cpu_vendor", fields.choice(CPU_VENDORS)),
    FieldSpec("p2p", "p2p", fields.boolean),
    FieldSpec("scaleup_domain_gpus", "scaleup_domain_gpus", fields.integer(0, 100_000), 0,
              help="GPUs in one NVLink domain (0 = gpus_per_node)"),
    FieldSpec("pcie_path", "pcie_path", fields.choice(PCIE_PATHS), "PXB",
              help="farthest GPU-to-GPU PCIe path, as nvidia-smi topo -m prints it"),
    FieldSpec("pcie_switch_gpus", "pcie_switch_gpus", fields.integer(1, 1024), 1,
              help="GPUs sharing one PCIe switch uplink (1 = own root port)"),
    FieldSpec("host_memory_bandwidth", "host_memory_bandwidth_Bps", fields.bandwidth_or_zero, 0.0,
              help="the node's CPU memory bandwidth, all sockets (0 = unknown); optimizer offload runs on it"),
    FieldSpec("mesh_links", "mesh_links", fields.link_matrix, (),
              help="a mesh node's links between each pair of GPUs (nvidia-smi topo -m's NV#); none = spread evenly"),
    FieldSpec("instance_names", "instance_names", fields.text_list, (),
              help="other names of the whole machine: a cloud instance's as its provider writes them "
                   "(VM sizes: ND96asr_v4), a site's (Perlmutter)"),
    FieldSpec("measured", "measured", fields.measured, (),
              help="calibrated collective curves (dpcost calibrate --system)"),
)

# TOML table key -> (plural label used in messages, field specs)
TABLES: dict[str, tuple[str, tuple[FieldSpec, ...]]] = {
    "gpu": ("gpus", GPU_FIELDS),
    "link": ("links", LINK_FIELDS),
    "system": ("systems", SYSTEM_FIELDS),
}


def entry_label(table: str, index: int, row: Any) -> str:
    """``systems[0] (my-box)``: how messages name one entry."""
    plural = TABLES[table][0]
    name = row.get("name") if isinstance(row, dict) else None
    return f"{plural}[{index}] ({name})" if isinstance(name, str) else f"{plural}[{index}]"


def _unknown_field_hint(key: str, known: set[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}one of the fields {', '.join(sorted(known))}"


def parse_entry(table: str, index: int, row: Any) -> tuple[dict[str, Any], list[ProfileError]]:
    """Parse one TOML table into dataclass keyword arguments plus every problem found."""
    label = entry_label(table, index, row)
    if not isinstance(row, dict):
        return {}, [ProfileError(label, row, f"a table [[{table}]]")]
    specs = TABLES[table][1]
    known = {spec.key for spec in specs}
    problems = [ProfileError(f"{label}.{key}", row[key], _unknown_field_hint(key, known))
                for key in row if key not in known]
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.key not in row:
            if spec.required:
                problems.append(ProfileError(f"{label}.{spec.key}", "missing", "a required field"))
            else:
                values[spec.attr] = spec.default
            continue
        try:
            values[spec.attr] = spec.parse(row[spec.key], f"{label}.{spec.key}")
        except ProfileError as error:
            problems.append(error)
    return values, problems
