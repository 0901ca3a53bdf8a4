"""`dpcost nccl-table`: NCCL's (RCCL's on AMD) per-(algorithm, protocol) latency/bandwidth table.

Like ``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING``: one row per collective, one ``lat/algBw``
cell (µs / GB/s) per algorithm and protocol; ``-`` where NCCL disables the cell. With
``--size`` it also says what NCCL would choose and the predicted nccl-tests time.
"""

from typing import Annotated

from costmodel.commands import complete
from costmodel.commands.common import cli_errors, echo, print_json
from costmodel.commands.options import Option


def _table_rows(table) -> dict[str, list[dict[str, object]]]:
    """``table(collective)`` -> its cells, for every collective NCCL's tuning model covers."""
    from costmodel.nccl import COLLECTIVES

    return {coll: [{"algorithm": c.algorithm, "protocol": c.protocol, "latency_us": c.latency_us,
                    "algbw_GBps": c.algbw_GBps, "enabled": c.applicable} for c in table(coll)]
            for coll in COLLECTIVES}


def _cell_text(cell: dict[str, object]) -> str:
    if not cell["enabled"]:
        return "-"
    return f"{cell['latency_us']:.1f}/{cell['algbw_GBps']:.1f}"


def _render(rows: dict[str, list[dict[str, object]]]) -> str:
    """Text table; algorithms disabled for every collective are left out."""
    used = {c["algorithm"] for row in rows.values() for c in row if c["enabled"]}
    cells = [c for c in next(iter(rows.values())) if c["algorithm"] in used]
    lines = ["Latency/AlgBw  |" + "".join(f" {c['algorithm'] + '/' + c['protocol']:>17} |" for c in cells)]
    for coll, row in rows.items():
        shown = [c for c in row if c["algorithm"] in used]
        lines.append(f"{coll:>14} |" + "".join(f" {_cell_text(c):>17} |" for c in shown))
    return "\n".join(lines)


def _show(header: str, rows: dict[str, list[dict[str, object]]], choice: str | None) -> None:
    """The text answer: the communicator, its cells, and with ``--size`` the stack's choice."""
    echo(header)
    echo(_render(rows))
    if choice:
        echo(choice)


def _choice_line(stack: str, collective: str, size: str, prediction, estimate_s: float) -> str:
    if prediction.size_bytes == 0:  # as `collective` answers it: no kernel, no time
        from costmodel.cluster.query import empty_note

        return f"{collective} {size}: " + empty_note(stack).removeprefix("0 bytes: ")
    if estimate_s is None:  # MSCCL's schedule runs it, past RCCL's tuning model: no estimate of its own
        return (f"{collective} {size}: {stack} runs MSCCL's schedule ({prediction.algorithm}/{prediction.protocol}), "
                f"not its tuning model's choice; predicted {prediction.time_s * 1e6:.1f} us, "
                f"busbw {prediction.busbw_Bps / 1e9:.1f} GB/s")
    return (f"{collective} {size}: {stack} chooses {prediction.algorithm}/{prediction.protocol}; "
            f"predicted {prediction.time_s * 1e6:.1f} us ({stack}'s own estimate {estimate_s * 1e6:.1f} us), "
            f"busbw {prediction.busbw_Bps / 1e9:.1f} GB/s")


def _nccl_json(prediction) -> dict:
    """NCCL's prediction as JSON; a 0-byte call's as `collective` gives it (query.empty_answer): no
    algorithm, its times 0, no bandwidth, and why (the table's cells keep the model's latencies)."""
    if prediction.size_bytes != 0:
        return prediction.as_dict()
    from dataclasses import replace

    from costmodel.cluster.query import empty_note
    from costmodel.names import NO_ALGORITHM

    none = replace(prediction, algorithm=NO_ALGORITHM, protocol="none", time_s=0.0, model_time_s=0.0,
                   latency_s=0.0, launch_overhead_s=0.0)
    return none.as_dict() | {"algbw_Bps": None, "busbw_Bps": None, "note": empty_note("NCCL")}


@cli_errors
def nccl_table(
    cluster: Annotated[str, Option(help="Bundled system name or a system TOML path, e.g. dgx-h100", autocompletion=complete.systems)],
    nodes: Annotated[int, Option(help="Number of nodes")] = 1,
    gpus_per_node: Annotated[int | None, Option(help="GPUs used per node (default: all)")] = None,
    tuning: Annotated[str | None, Option(help="TOML overriding NCCL's constants (tuner-plugin style)")] = None,
    nccl_version: Annotated[str | None, Option(help="Bundled NCCL constants: 2.30.7 (default), 2.27.5, 2.21.5")] = None,
    p2p_level: Annotated[str | None, Option("--p2p-level", help="As NCCL_P2P_LEVEL: LOC, NVL, PIX, PXB, PHB or SYS (default: NCCL's own rule)")] = None,
    size: Annotated[str | None, Option(help="Also predict one call of this size, e.g. 1GiB")] = None,
    collective: Annotated[str | None, Option(help="Collective for --size (default all-reduce)")] = None,
    json_output: Annotated[bool, Option("--json", help="Print JSON")] = False,
) -> None:
    """Show NCCL's tuning table for a cluster (RCCL's on AMD), as NCCL_DEBUG=TUNING prints it.

    Example: dpcost nccl-table --cluster dgx-h100 --nodes 2 --size 256MiB
    """
    from costmodel.cluster.counts import layout_counts
    from costmodel.cluster.stacks import Stack, default_stack
    from costmodel.nccl import cost_table, load_tables, nccl_time, topology_for
    from dpbase.errors import InputError
    from dpbase.units import parse_message_size
    from hardware import load_system

    if collective is not None and size is None:  # the table shows every collective: it would be ignored
        raise InputError("--collective", collective, "only with --size (the table lists every collective)")
    collective = "all-reduce" if collective is None else collective
    system = load_system(cluster)
    # the node count and message size every other command takes (10^40 nodes and 0.5 B were tabled;
    # an audit, 2026-11-30)
    layout_counts(system, nodes, gpus_per_node)  # the check alone: the layout is built where it is used
    size_bytes = None if size is None else parse_message_size(size, "size")
    if default_stack(system) is Stack.RCCL:
        _rccl_table(system, cluster, nodes, gpus_per_node, size, collective, json_output,
                    {"--tuning": tuning, "--nccl-version": nccl_version, "--p2p-level": p2p_level})
        return
    tables = load_tables(tuning, version=nccl_version)
    topo = topology_for(system, nodes, gpus_per_node, tables, p2p_level=p2p_level)
    rows = _table_rows(lambda coll: cost_table(coll, topo, tables))
    prediction = nccl_time(collective, size_bytes, topo, tables) if size_bytes is not None else None
    if json_output:
        graphs = {name: getattr(topo, name) and {"n_channels": getattr(topo, name).n_channels,
                                                  "bw_intra_GBps": getattr(topo, name).bw_intra_GBps,
                                                  "bw_inter_GBps": getattr(topo, name).bw_inter_GBps}
                  for name in ("ring", "tree", "nvls", "collnet")}
        print_json({"cluster": cluster, "stack": "nccl", "nccl_version": tables.version, "n_ranks": topo.n_ranks,
                    "n_nodes": topo.n_nodes, "graphs": graphs, "table": rows,
                    "prediction": _nccl_json(prediction) if prediction else None})
        return
    if topo.n_ranks == 1:
        echo(f"{topo.description}; NCCL {tables.version}: one rank, nothing to communicate "
                   "(every algorithm/protocol cell is disabled)")
        return
    choice = prediction and _choice_line("NCCL", collective, size, prediction, prediction.model_time_s)
    if choice and system.measured:  # the table is NCCL's model; a calibrated profile's curves are collective's
        choice += ("\nnote: NCCL's model, not this profile's measured curves (dpcost collective --cluster "
                   f"{cluster} applies them)")
    _show(f"{topo.description}; NCCL {tables.version}; ring {topo.ring.n_channels} ch x "
          f"{topo.ring.bw_intra_GBps:g}/{topo.ring.bw_inter_GBps:g} GB/s", rows, choice)


def _rccl_table(system, cluster: str, nodes: int, gpus_per_node: int | None, size: str | None, collective: str,
                json_output: bool, nccl_only: dict[str, object]) -> None:
    """RCCL's table on an AMD system: its tuning model (constants of RCCL's source), the
    communicator's bus bandwidth from the profile, and with ``--size`` RCCL's choice and the time."""
    from costmodel.cluster.backends import predict_collective
    from costmodel.cluster.mapping import layout
    from costmodel.cluster.rccl_choice import rccl_topology
    from costmodel.nccl.names import normalize_collective
    from costmodel.nccl.rccl import cost_table, rccl_tables
    from dpbase.errors import InputError
    from dpbase.units import parse_message_size

    for flag, value in nccl_only.items():
        if value is not None:
            raise InputError(flag, value, f"an NVIDIA system: {system.name} runs RCCL, whose constants are bundled as "
                                          "they ship (no tuning override, one version, no P2P level)")
    lay = layout(system, nodes, gpus_per_node)
    version = rccl_tables()["version"]
    if lay.ranks == 1:  # one rank: no communicator for RCCL to tune
        if json_output:
            print_json({"cluster": cluster, "stack": "rccl", "rccl_version": version, "n_ranks": 1, "n_nodes": 1,
                        "table": None, "prediction": None})
        else:
            echo(f"{system.name}: RCCL {version}: one rank, nothing to communicate")
        return
    topo = rccl_topology(lay)
    rows = _table_rows(lambda coll: cost_table(coll, topo))
    prediction = None
    if size is not None:
        prediction = predict_collective(normalize_collective(collective), parse_message_size(size, "size"), lay, backend="rccl")[0]
        if prediction.size_bytes == 0:  # as `collective` answers it
            from costmodel.cluster.query import empty_answer

            prediction = empty_answer(prediction)
    if json_output:
        print_json({"cluster": cluster, "stack": "rccl", "rccl_version": version, "n_ranks": topo.n_ranks,
                    "n_nodes": topo.n_nodes, "arch": topo.arch, "tuning_model": topo.tuning,
                    "bus_bw_GBps": topo.bus_bw_GBps, "table": rows,
                    "prediction": prediction.to_dict() if prediction else None})
        return
    _show(f"{system.name} {nodes} x {lay.gpus_per_node} ({topo.arch or 'unknown arch'}); RCCL {version}, "
          f"tuning model {topo.tuning}; bus bandwidth {topo.bus_bw_GBps:.1f} GB/s (the ring's, from the profile)", rows,
          prediction and _choice_line("RCCL", collective, size, prediction, prediction.nccl_model_time_s))
