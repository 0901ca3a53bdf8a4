"""``dpcost hardware``: list, show and validate hardware profiles.

Thin commands over :mod:`hardware`; every one takes ``--json``.
"""

from enum import Enum
from typing import Annotated, Any

from costmodel.commands import complete
from costmodel.commands.common import EXIT_BAD_INPUT, cli_errors, echo, print_json
from costmodel.commands.options import Argument, Option
from costmodel.commands.textfmt import table
from dpbase.text import printable
from dpbase.units import format_bandwidth, format_size, format_time


class Kind(str, Enum):
    """Which profiles to list."""

    gpu = "gpu"
    link = "link"
    system = "system"


JsonOption = Annotated[bool, Option("--json", help="Print JSON instead of a table.")]


def _gpu_row(gpu: Any) -> dict[str, str]:
    from costmodel.training import roofline

    bf16 = gpu.peak_flops.get("bf16", gpu.peak_flops.get("fp16"))
    ceiling = f"{roofline.matmul_ceiling(gpu):.3f}"
    return {"name": gpu.name, "arch": gpu.arch, "memory": format_size(gpu.memory_bytes),
            "hbm": format_bandwidth(gpu.hbm_bandwidth_Bps),
            "bf16/fp16 TFLOPS": f"{bf16 / 1e12:.4g}" if bf16 else "-",
            "scale-up": format_bandwidth(gpu.scaleup_bandwidth_Bps) if gpu.scaleup_link else "none",
            # a transformer's MFU is the width roofline's, from the matmul ceiling (A100 SXM's where
            # none was measured: marked); the profile's default MFU is for models without a width
            "matmul ceiling": ceiling if roofline.ceiling_measured(gpu) else f"({ceiling})",
            "default mfu": f"{gpu.default_mfu:.2f}"}


def _link_row(link: Any) -> dict[str, str]:
    return {"name": link.name, "category": link.category, "bandwidth": format_bandwidth(link.bandwidth_Bps),
            "efficiency": f"{link.efficiency:.3g}", "achievable": format_bandwidth(link.achievable_bandwidth_Bps),
            "latency": format_time(link.latency_s), "sharp": "yes" if link.sharp else ""}


def _system_row(system: Any) -> dict[str, str]:
    return {"name": system.name, "gpu": system.gpu.name, "gpus": str(system.gpus_per_node),
            "fabric": system.intra_fabric, "intra/GPU": format_bandwidth(system.intra_bandwidth_Bps),
            "nics": f"{system.nics_per_node}x {system.nic_link.name}",
            "net/GPU": format_bandwidth(system.nic_bandwidth_per_gpu_Bps),
            "reduction": system.in_network_reduction or "-"}


ROW_MAKERS = {"gpu": _gpu_row, "link": _link_row, "system": _system_row}


@cli_errors
def list_command(
    kind: Annotated[Kind | None, Option(help="Only this kind of profile.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List bundled profiles.

    Example: dpcost hardware list --kind system
    """
    from hardware import list_profiles
    from hardware.describe import kind_of, to_dict

    profiles = list_profiles(kind.value if kind else None)
    if as_json:
        print_json([to_dict(profile) for profile in profiles])
        return
    for name in ("gpu", "link", "system"):
        rows = [ROW_MAKERS[name](p) for p in profiles if kind_of(p) == name]
        if rows:
            echo(f"{name}s ({len(rows)})\n{table(rows)}\n")


# Fields whose 0 means "not given" (hardware.profiles): shown as what is taken instead, not as a
# rate or count of 0 ("host_link_bandwidth_Bps 0 GB/s" read as a GPU cut off from its host; an
# audit of the hardware data, 2026-11-30). The JSON keeps the 0 the profile holds.
UNSET_SHOWN = {
    "host_link_bandwidth_Bps": "- (not NVLink-C2C: the PCIe link of pcie_gen)",
    "host_memory_bandwidth_Bps": "- (not given: optimizer offload and host-memory reduction refused)",
    "scaleup_domain_gpus": "- (one node: domain_gpus)",
}


def _human(key: str, value: Any) -> str:
    """One field for people: units by the key's suffix, nested profiles by name."""
    if value == "" or value is None:
        return "-"
    if key in UNSET_SHOWN and value == 0:
        return UNSET_SHOWN[key]
    if isinstance(value, dict) and "kind" in value:
        return str(value["name"])
    if key == "peak_flops":
        return ", ".join(f"{dtype} {flops / 1e12:.4g}" for dtype, flops in value.items()) + " TFLOP/s"
    if key == "regimes":  # a regime says "flat" only where it is (hardware.profiles.Regime)
        return "; ".join(_human("", {k: v for k, v in regime.items() if k != "flat"}) + (", flat" if regime.get("flat")
                                                                                        else "") for regime in value) or "-"
    if key == "measured":  # calibrated curves: one line each, not their regimes
        return "; ".join(f"{c['collective']} on {c['nodes']} node(s) x {c['gpus_per_node']}, algorithm "
                         f"{c['algorithm']}, {format_size(c['min_size_bytes'])}-{format_size(c['max_size_bytes'])}, "
                         f"{len(c['regimes'])} regime(s), cross-validated median error "
                         f"{100 * c['median_error']:.1f} %" for c in value) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_human(k, v)}" for k, v in value.items())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):  # names: instance_names
        return ", ".join(value) or "-"
    formatters = {"_bytes": format_size, "_Bps": format_bandwidth, "_s": format_time}
    for suffix, formatter in formatters.items():
        if key.endswith(suffix) and isinstance(value, float):
            return formatter(value) if value != float("inf") else "unbounded"
    return str(value)


def _detail_lines(data: dict[str, Any]) -> list[str]:
    """One line per field; keys and values from the user's file with control characters escaped."""
    keys = {key: printable(key) for key in data}
    width = max(len(key) for key in keys.values())
    return [f"{keys[key].ljust(width)}  {printable(_human(key, value))}" for key, value in data.items()]


@cli_errors
def show_command(
    name: Annotated[str, Argument(help="A bundled profile name or a path to a TOML file.", autocompletion=complete.profiles)],
    kind: Annotated[Kind | None, Option(help="Kind to look up when a name is ambiguous.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Show every field of one profile (base units: bytes, B/s, s, FLOP/s).

    Example: dpcost hardware show dgx-h100
    """
    from hardware import is_path, load_file, load_profile
    from hardware.describe import to_dict

    data = to_dict(load_profile(name, kind.value if kind else None))
    catalog = load_file(name) if is_path(name) else None
    calibration = catalog.metadata.get("calibration") if catalog is not None else None
    # the file's other profiles, which this one line of output leaves out (two [[system]] and a
    # [[link]] showed the link alone, unsaid; an audit, 2026-11-30)
    skipped = {} if catalog is None else {
        table: sorted(entries) for table in ("system", "gpu", "link")
        if (entries := {n for n in catalog.kind(table) if (table, n) != (data.get("kind"), data.get("name"))})}
    if as_json:
        print_json({**data, **({"calibration": calibration} if calibration else {}),
                    **({"also_in_file": skipped} if skipped else {})})
        return
    lines = _detail_lines(data)
    if calibration:
        lines.append(f"calibration  {printable(_calibration_summary(calibration))}")
    echo("\n".join(lines))
    if skipped:
        also = "; ".join(f"{len(names)} [[{table}]] ({', '.join(names)})" for table, names in skipped.items())
        echo(f"note: the file also holds {printable(also)}, not shown (one profile of a kind per file is shown; "
             "--kind picks the kind)", err=True)


def _calibration_summary(table: dict[str, Any]) -> str:
    """One line on where a calibrated profile came from (its ``[calibration]`` table)."""
    what = f"{table.get('collective', '?')} on {table.get('ranks', '?')} ranks ({table.get('algorithm', '?')})"
    error = table.get("median_abs_pct_error")
    fit = f", fit median error {error:.3g} %" if isinstance(error, (int, float)) else ""
    sources = table.get("sources") or []
    return what + fit + (f", from {', '.join(map(str, sources))}" if sources else "")


@cli_errors
def validate_command(
    path: Annotated[str, Argument(help="A profile TOML file to check.")],
    as_json: JsonOption = False,
) -> None:
    """Check a profile TOML file; print "ok" or every problem (exit code 2).

    With ``--json`` the report goes to stdout and, as every command's errors do, each problem
    still goes to stderr as an ``error:`` line.

    Example: dpcost hardware validate my-cluster.toml
    """
    from hardware import validate_file

    problems = validate_file(path)
    if not problems:  # a calibrated system's curves: names and layouts its queries can use
        problems = _curve_problems(path)
    if as_json:
        print_json({"path": path, "valid": not problems, "problems": problems})
    if problems:
        echo("\n".join(f"error: {printable(problem)}" for problem in problems), err=True)
        raise SystemExit(EXIT_BAD_INPUT)
    if not as_json:
        echo("ok")
        for note in _usable_as(path) + _rate_notes(path) + _regime_notes(path):
            echo(f"note: {printable(note)}")


def _rate_notes(path: str) -> list[str]:
    """:func:`hardware.notes.rate_mismatch_notes` of the system ``path`` defines (none for a file
    of GPUs or links only): valid, and likely a bits/bytes typo."""
    from dpbase.errors import DpcostError
    from hardware import load_system
    from hardware.notes import rate_mismatch_notes

    try:
        system = load_system(path)
    except DpcostError:
        return []
    return rate_mismatch_notes(system)


def _regime_notes(path: str) -> list[str]:
    """:func:`hardware.notes.falling_regime_notes` of the file's links and its systems' links."""
    from hardware.loader import load_file
    from hardware.notes import falling_regime_notes

    catalog = load_file(path)
    links = {link.name: link for link in catalog.links.values()}
    for system in catalog.systems.values():
        links.update({link.name: link for link in (system.nic_link, system.intra_link)})
    return falling_regime_notes(links.values())


def _usable_as(path: str) -> list[str]:
    """Where a valid file cannot be named: --cluster takes a file with one [[system]] (its GPUs and
    links may be several: the system names them); a file of several systems is a valid library
    that no --cluster takes whole."""
    from hardware.loader import load_file

    found = load_file(path).kind("system")
    if len(found) < 2:
        return []
    return [f"{len(found)} [[system]] tables ({', '.join(found)}): --cluster takes a file with exactly one, "
            "so none of them can be named through this file"]


def _curve_problems(path: str) -> list[str]:
    """:func:`costmodel.cluster.measured.curve_problems` of the system ``path`` defines (none for a
    file of GPUs or links only)."""
    from costmodel.cluster.measured import curve_problems
    from dpbase.errors import DpcostError
    from hardware import load_system

    try:
        system = load_system(path)
    except DpcostError:  # no system in the file: nothing measured to check
        return []
    return curve_problems(system)


# `dpcost hardware NAME`: its subcommands (cli builds the typer group from them).
HELP = "Hardware profiles: GPUs, links and systems (bundled or user TOML)."
SUBCOMMANDS = {"list": list_command, "show": show_command, "validate": validate_command}
