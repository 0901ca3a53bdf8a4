"""Turn a parsed TOML document into profile objects, resolving names between them.

Links come first (they reference nothing), then GPUs (their ``scaleup_link``), then
systems (their ``gpu``, ``intra_link`` and ``nic_link``). A name is looked up in the same
document first and then in the ``fallback`` catalog (the bundled profiles). Every problem
is collected so that validation can report them all at once. Top-level metadata tables
(``[calibration]``, see :mod:`hardware.metadata`) are checked lightly and kept as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpbase.errors import ProfileError
from dpbase.values import field, frozen
from hardware.metadata import METADATA_TABLES
from hardware.profiles import ARCHITECTURES, MESH_FABRICS, NO_LINK, NVLS_MIN_NVSWITCH_GEN, Gpu, Link, System
from hardware.schema import TABLES, entry_label, parse_entry


@frozen
class Catalog:
    """Profiles by name, one mapping per kind, and the file's metadata tables by name."""

    gpus: dict[str, Gpu] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    systems: dict[str, System] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def kind(self, table: str) -> dict[str, Any]:
        """The mapping for a TOML table key (``gpu``, ``link`` or ``system``)."""
        return {"gpu": self.gpus, "link": self.links, "system": self.systems}[table]


EMPTY = Catalog()


class _Build:
    """Mutable state of one build: the catalog being filled and the problems found."""

    def __init__(self, fallback: Catalog, catalog: Catalog, problems: list[ProfileError],
                 defined: dict[str, set[str]]) -> None:
        self.fallback, self.catalog, self.problems = fallback, catalog, problems
        # the names each table of the file defines: tables are built links, GPUs, systems, so a
        # name defined there but not in the catalog when looked up was refused for its own error
        self.defined = defined

    def lookup(self, table: str, name: str, label: str) -> Any:
        """The profile ``name`` of ``table`` (this file first, then the fallback), or None: an
        unknown name is a problem; a name this file defines but refused is not reported twice."""
        if name in self.catalog.kind(table):
            return self.catalog.kind(table)[name]
        if name in self.defined[table]:  # refused (reported already); it shadows a bundled one all the same
            return None
        if name in self.fallback.kind(table):
            return self.fallback.kind(table)[name]
        known = sorted(set(self.catalog.kind(table)) | set(self.fallback.kind(table)))
        self.problems.append(ProfileError(label, name, f"a {table} name: one of {', '.join(known)}"))
        return None


# CUDA compute capabilities (x10) of each NVIDIA architecture (NVIDIA CUDA C++ Programming Guide,
# "Compute Capabilities": Kepler 3.x, Maxwell 5.x, Pascal 6.x, Volta 7.0/7.2, Turing 7.5, Ampere 8.0-8.7,
# Ada 8.9, Hopper 9.0, Blackwell 10.x-12.x); AMD GPUs have none (0).
COMPUTE_CAPABILITIES = {"kepler": (30, 39), "maxwell": (50, 53), "pascal": (60, 69), "volta": (70, 72), "turing": (75, 75),
                        "ampere": (80, 87), "ada": (89, 89), "hopper": (90, 90), "blackwell": (100, 129)}


def _check_gpu(build: _Build, label: str, values: dict[str, Any]) -> bool:
    """Vendor, architecture and compute capability that agree (an AMD 'hopper' with sm_90 ran
    NVIDIA-only paths under RCCL); False when a problem was added."""
    vendor, arch, capability = values["vendor"], values["arch"], values["compute_capability"]
    if (vendor == "nvidia") != (arch in COMPUTE_CAPABILITIES):  # NVIDIA's are the ones CUDA numbers
        amd = ", ".join(a for a in ARCHITECTURES if a not in COMPUTE_CAPABILITIES)
        build.problems.append(ProfileError(f"{label}.arch", arch, f"a CDNA architecture ({amd}) for "
                                           f'vendor = "amd", another for "nvidia" (vendor is "{vendor}")'))
        return False
    if vendor == "amd" and capability != 0:
        build.problems.append(ProfileError(f"{label}.compute_capability", capability, '0 for vendor = "amd"'))
        return False
    if vendor == "nvidia":
        low, high = COMPUTE_CAPABILITIES[arch]
        if not low <= capability <= high:
            allowed = f"{low}" if low == high else f"{low} to {high}"
            build.problems.append(ProfileError(f"{label}.compute_capability", capability,
                                               f"{allowed} for arch = \"{arch}\" (CUDA SM version x10)"))
            return False
    return True


def _add_gpu(build: _Build, label: str, values: dict[str, Any], row: dict[str, Any]) -> Gpu | None:
    if not _check_gpu(build, label, values):
        return None
    name = values["scaleup_link"]
    link = None if name == NO_LINK else build.lookup("link", name, f"{label}.scaleup_link")
    if link is None and name != NO_LINK:
        return None
    bandwidth = values["scaleup_bandwidth_Bps"]
    if link is None and bandwidth > 0:
        build.problems.append(ProfileError(f"{label}.scaleup_bandwidth", bandwidth,
                                           'omitted or "0GB/s" when scaleup_link = "none"'))
        return None
    if link is not None and bandwidth == 0:  # 0 means "no scale-up link": only with scaleup_link = "none"
        written = row.get("scaleup_bandwidth", "missing")
        build.problems.append(ProfileError(f"{label}.scaleup_bandwidth", written,
                                           f'a bandwidth > 0 when scaleup_link = "{name}" (e.g. "450GB/s"); '
                                           '"0GB/s" or omitted only with scaleup_link = "none"'))
        return None
    return Gpu(**{**values, "scaleup_link": link})


def _check_system(build: _Build, label: str, values: dict[str, Any]) -> None:
    reduction = values["in_network_reduction"]
    if reduction == "nvls" and values["nvswitch_gen"] < NVLS_MIN_NVSWITCH_GEN:
        build.problems.append(ProfileError(f"{label}.in_network_reduction", reduction,
                                           f'"nvls" only with nvswitch_gen >= {NVLS_MIN_NVSWITCH_GEN}'))
    if reduction == "sharp" and not values["nic_link"].sharp:
        build.problems.append(ProfileError(f"{label}.in_network_reduction", reduction,
                                           '"sharp" only when nic_link has sharp = true'))
    if values["intra_fabric"] == "nvswitch" and values["nvswitch_gen"] == 0:
        build.problems.append(ProfileError(f"{label}.nvswitch_gen", 0,
                                           'an NVSwitch generation >= 1 when intra_fabric = "nvswitch"'))
    if values["nvswitch_gen"] and values["intra_fabric"] != "nvswitch":  # an NVSwitch generation read, a fabric not
        build.problems.append(ProfileError(f"{label}.nvswitch_gen", values["nvswitch_gen"],
                                           f'0 unless intra_fabric = "nvswitch" (it is "{values["intra_fabric"]}")'))
    if not values["p2p"] and values["intra_fabric"] != "pcie":  # read only where GPUs meet over PCIe
        build.problems.append(ProfileError(f"{label}.p2p", False, "true unless intra_fabric = \"pcie\" (GPUs on "
                                           f'{values["intra_fabric"]} reach one another without PCIe peer access)'))
    domain, per_node = values["scaleup_domain_gpus"], values["gpus_per_node"]
    if domain and (domain < per_node or domain % per_node):  # read as whole nodes in one NVLink domain
        build.problems.append(ProfileError(f"{label}.scaleup_domain_gpus", domain,
                                           f"0 (one node) or a multiple of gpus_per_node = {per_node} (the "
                                           "nodes one NVLink domain holds)"))
    _check_mesh_links(build, label, values)
    if values["pcie_switch_gpus"] > values["gpus_per_node"]:
        build.problems.append(ProfileError(f"{label}.pcie_switch_gpus", values["pcie_switch_gpus"],
                                           f"at most gpus_per_node = {values['gpus_per_node']}"))


def _check_mesh_links(build: _Build, label: str, values: dict[str, Any]) -> None:
    """A mesh's link matrix: one row per GPU, symmetric, no link to itself, at least one link on
    every GPU, on a mesh fabric only (the share of the links a job gets is read from it, so a
    bandwidth changed later keeps the layout)."""
    matrix, per_node = values["mesh_links"], values["gpus_per_node"]
    if not matrix:
        return
    size = len(matrix)
    wrong = ("a mesh fabric (nvlink-mesh, xgmi)" if values["intra_fabric"] not in MESH_FABRICS
             else f"one row per GPU ({per_node})" if size != per_node
             else "no links from a GPU to itself (a zero diagonal)" if any(matrix[i][i] for i in range(size))
             else "a symmetric matrix (GPU i to j as j to i)" if any(matrix[i][j] != matrix[j][i]
                                                                      for i in range(size) for j in range(size))
             else "at least one link on every GPU" if not all(map(sum, matrix))
             else None)
    if wrong:
        build.problems.append(ProfileError(f"{label}.mesh_links", [list(row) for row in matrix], wrong))


def _add_system(build: _Build, label: str, values: dict[str, Any], row: dict[str, Any]) -> System | None:
    resolved = {
        "gpu": build.lookup("gpu", values["gpu"], f"{label}.gpu"),
        "intra_link": build.lookup("link", values["intra_link"], f"{label}.intra_link"),
        "nic_link": build.lookup("link", values["nic_link"], f"{label}.nic_link"),
    }
    if any(value is None for value in resolved.values()):
        return None
    values = {**values, **resolved}
    before = len(build.problems)
    _check_system(build, label, values)
    return System(**values) if len(build.problems) == before else None


REFERENCES = {"gpu": {"scaleup_link": "link"}, "system": {"gpu": "gpu", "intra_link": "link", "nic_link": "link"}}


def _check_references(build: _Build, table: str, label: str, values: dict[str, Any]) -> None:
    """Report unknown names in an entry that has other problems too."""
    for attr, target in REFERENCES.get(table, {}).items():
        if attr in values and values[attr] != NO_LINK:
            build.lookup(target, values[attr], f"{label}.{attr}")


def _add_link(build: _Build, label: str, values: dict[str, Any], row: dict[str, Any]) -> Link:
    return Link(**values)


_BUILDERS: dict[str, Callable[[_Build, str, dict[str, Any], dict[str, Any]], Any]] = {
    "link": _add_link, "gpu": _add_gpu, "system": _add_system,
}


def _build_table(build: _Build, table: str, rows: list[Any]) -> None:
    target = build.catalog.kind(table)
    for index, row in enumerate(rows):
        values, problems = parse_entry(table, index, row)
        build.problems.extend(problems)
        if problems:
            _check_references(build, table, entry_label(table, index, row), values)
            continue
        label = entry_label(table, index, row)
        if values["name"] in target:
            build.problems.append(ProfileError(f"{label}.name", values["name"], f"a {table} name unique in the file"))
            continue
        profile = _BUILDERS[table](build, label, values, row)
        if profile is not None:  # None: refused for a problem already reported
            target[values["name"]] = profile


def _top_level_problems(document: dict[str, Any]) -> list[ProfileError]:
    tables = ", ".join([f"[[{table}]]" for table in TABLES] + [f"[{table}]" for table in METADATA_TABLES])
    problems = [ProfileError(f"[{key}]", "unknown table", tables)
                for key in document if key not in TABLES and key not in METADATA_TABLES]
    problems += [ProfileError(f"[[{key}]]", document[key], "an array of tables")
                 for key in TABLES if key in document and not isinstance(document[key], list)]
    for key, check in METADATA_TABLES.items():
        if key in document:
            problems += check(document[key])
    if not any(key in TABLES for key in document):
        problems.append(ProfileError("file", "no profiles", "at least one [[gpu]], [[link]] or [[system]] table"))
    return problems


def build_catalog(document: dict[str, Any], fallback: Catalog = EMPTY) -> tuple[Catalog, list[ProfileError]]:
    """Profiles defined in ``document`` (names resolved against it, then ``fallback``)."""
    metadata = {key: document[key] for key in METADATA_TABLES if key in document}
    lists = {table: rows if isinstance(rows := document.get(table, []), list) else [] for table in TABLES}
    defined = {table: {row["name"] for row in rows if isinstance(row, dict) and isinstance(row.get("name"), str)}
               for table, rows in lists.items()}
    build = _Build(fallback=fallback, catalog=Catalog(metadata=metadata), problems=_top_level_problems(document),
                   defined=defined)
    for table in ("link", "gpu", "system"):
        rows = document.get(table, [])
        if isinstance(rows, list):
            _build_table(build, table, rows)
    return build.catalog, build.problems
