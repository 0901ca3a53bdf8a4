"""``dpcost sweep``: a table of predictions over sizes × clusters × nodes/ranks × algorithms × backends."""

import sys
from typing import Annotated, Optional

from costmodel.commands import complete
from costmodel.commands.common import algorithm_fields, cli_errors, comma_counts, comma_list, echo, print_json
from costmodel.commands.options import (
    ALPHA,
    CHUNKS,
    COLOCATED,
    GPUS_PER_NODE,
    LEADERS,
    NO_PIPELINE,
    SERVERS,
    Argument,
    Option,
)
from costmodel.commands.textfmt import table
from dpbase.errors import InputError
from dpbase.text import printable

FORMATS = ("table", "csv", "json")
EXAMPLES = {"nodes": "1,2,4", "ranks": "8,16", "cluster": "dgx-h100,dgx-a100", "link": "nvlink4,ib-ndr",
            "algorithm": "ring,double-binary-tree", "backend": "nccl,ideal", "primitives": "all-reduce,all-gather"}
MAX_SIZES = 4096  # sizes one range may hold
DEFAULT_FACTOR = 4.0  # ratio between successive sizes of a range
TABLE_COLUMNS = ("primitive", "cluster", "nodes", "ranks", "size_bytes", "algorithm", "protocol", "backend",
                 "time_s", "busbw_Bps")


def _list(text: str | None, field: str, parse=str) -> list | None:
    return None if text is None else list(comma_list(text, field, EXAMPLES.get(field, "1MiB,1GiB"), parse))


def _counts(text: str | None, field: str) -> list[int] | None:
    return None if text is None else list(comma_counts(text, field, EXAMPLES[field]))


def _sizes(sizes: str | None, min_size: str | None, max_size: str | None, factor: float | None) -> list[float]:
    from dpbase.units import parse_message_size, parse_size

    if sizes is not None:
        if min_size is not None or max_size is not None or factor is not None:
            raise InputError("--sizes", "given with --min-size/--max-size/--factor", "either a list or a range")
        return _list(sizes, "sizes", lambda item: parse_message_size(item, "sizes"))
    # "" is text to refuse, not the default (it swept from 1 KiB; an audit, 2026-11-30)
    low_text, high_text = ("1KiB" if min_size is None else min_size), ("1GiB" if max_size is None else max_size)
    low, high = parse_size(low_text, "min_size"), parse_size(high_text, "max_size")
    factor = DEFAULT_FACTOR if factor is None else factor
    if not 1.0 < factor <= 1024.0:
        raise InputError("factor", factor, "a number in (1, 1024]")
    if low < 1:  # a message holds whole bytes (0 cannot grow by the factor)
        raise InputError("min_size", low_text, "a size of at least 1 byte")
    if high < low:  # the option given is the one named (a --max-size under the default minimum blamed min_size)
        field, text, other = (("max_size", high_text, f"--min-size ({low_text})") if max_size is not None
                              else ("min_size", low_text, f"--max-size ({high_text})"))
        raise InputError(field, text, f"a size {'>=' if field == 'max_size' else '<='} {other}")
    out, size = [], low
    while size <= high * (1 + 1e-12):
        if len(out) == MAX_SIZES:
            raise InputError("factor", factor, f"a factor giving at most {MAX_SIZES:,} sizes from --min-size to "
                             "--max-size (raise it or narrow the range)")
        out.append(size)
        size *= factor
    return out


def flat(df):
    """The sweep with one scalar per cell (for CSV): ``params`` as JSON text, the interval as two columns."""
    import json

    out = df.copy()
    out["params"] = df["params"].map(lambda p: json.dumps(p, sort_keys=True))
    intervals = df["interval_s"].map(lambda i: (None, None) if not isinstance(i, (tuple, list)) else tuple(i))
    out["interval_low_s"] = intervals.map(lambda i: i[0])
    out["interval_high_s"] = intervals.map(lambda i: i[1])
    return out.drop(columns=["interval_s"])


def _text(df) -> str:
    from dpbase.units import format_bandwidth, format_size, format_time

    rows = []
    for record in df.to_dict("records"):
        row = {}
        for column in TABLE_COLUMNS:
            value = record.get(column)
            if column == "size_bytes":
                row["size"] = format_size(value)
            elif column == "time_s":
                row["time"] = format_time(value)
            elif column == "busbw_Bps":
                row["busbw"] = format_bandwidth(value) if value == value and value is not None else "-"
            else:
                row[column] = "-" if value is None or value != value else str(int(value) if isinstance(value, float)
                                                                             and value.is_integer() else value)
        rows.append(row)
    return table(rows)


@cli_errors
def sweep(
    primitives: Annotated[str, Argument(help="Collective(s), comma-separated: all-reduce,all-gather.")],
    sizes: Annotated[Optional[str], Option("--sizes", help="Sizes, comma-separated (1MiB,1GiB); or a range with --min-size/--max-size/--factor.")] = None,
    min_size: Annotated[Optional[str], Option("--min-size", help="Smallest size of the range (default 1KiB).")] = None,
    max_size: Annotated[Optional[str], Option("--max-size", help="Largest size of the range (default 1GiB).")] = None,
    factor: Annotated[Optional[float], Option("--factor", help="Ratio between successive sizes of the range (default 4).")] = None,
    cluster: Annotated[Optional[str], Option("--cluster", help="System profile(s), comma-separated names or TOML paths.", autocompletion=complete.systems)] = None,
    nodes: Annotated[Optional[str], Option("--nodes", help="Node counts on --cluster, comma-separated (default 1).")] = None,
    gpus_per_node: GPUS_PER_NODE = None,
    ranks: Annotated[Optional[str], Option("--ranks", "-N", help="Rank counts on a link or bare α/β, comma-separated.")] = None,
    link: Annotated[Optional[str], Option("--link", help="Link profile(s), comma-separated (instead of --alpha/--bandwidth).", autocompletion=complete.links)] = None,
    alpha: ALPHA = None,
    bandwidth: Annotated[Optional[str], Option("--bandwidth", help="Link bandwidth, e.g. 25GB/s.")] = None,
    gamma: Annotated[str, Option("--gamma", help="Reduction time per byte (0 by default); rows NCCL's model answers are left out with it.")] = "0s",
    algorithm: Annotated[str, Option("--algorithm", "-a", help="Algorithm(s), comma-separated, or auto.")] = "auto",
    backend: Annotated[str, Option("--backend", help="Backend(s), comma-separated: auto, ideal, nccl, rccl.")] = "auto",
    stack: Annotated[Optional[str], Option("--stack", help="nccl, rccl, mpi or gloo: what auto may pick.")] = None,
    servers: SERVERS = None,
    colocated: COLOCATED = False,
    no_pipeline: NO_PIPELINE = False,
    chunks: CHUNKS = None,
    leaders: LEADERS = False,
    format_: Annotated[Optional[str], Option("--format", help="table, csv or json.  [default: table]", show_default=False)] = None,
    output: Annotated[Optional[str], Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    json_: Annotated[bool, Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Predict every combination of the axes; one row each the model answers (every Prediction field in csv/json; the others are left out with a note).

    Example: dpcost sweep all-reduce --cluster dgx-h100,dgx-a100 --nodes 1,2 --sizes 1MiB,1GiB --format csv
    """
    from costmodel.cluster.api import sweep as run_sweep
    from dpbase.safeio import write_outputs

    if json_:  # an explicit --format table with --json printed JSON (CLI audit, 2026-12-01)
        if format_ not in (None, "json"):
            raise InputError("--json", "given with --format " + format_, "one output format")
        format_ = "json"
    format_ = "table" if format_ is None else format_
    if format_ not in FORMATS:
        raise InputError("format", format_, ", ".join(FORMATS))
    clusters = _list(cluster, "cluster")
    links = _list(link, "link")
    if clusters is not None and (links is not None or alpha is not None or bandwidth is not None):
        raise InputError("--cluster", "given with --link/--alpha/--bandwidth", "one source of hardware")
    if clusters is not None and ranks is not None:
        raise InputError("--ranks", ranks, "--nodes with --cluster (ranks = nodes × GPUs per node)")
    if clusters is None and nodes is not None:
        raise InputError("--nodes", nodes, "only with --cluster (use --ranks on a link)")
    df = run_sweep(_list(primitives, "primitives"), _sizes(sizes, min_size, max_size, factor), clusters=clusters,
                   nodes=_counts(nodes, "nodes") or 1, ranks=_counts(ranks, "ranks"),
                   algorithms=_list(algorithm, "algorithm"), backends=_list(backend, "backend"), links=links,
                   alpha_s=alpha, bandwidth_Bps=bandwidth, gamma_s_per_byte=gamma, gpus_per_node=gpus_per_node,
                   stack=stack, cli_words=True, **algorithm_fields(servers, colocated, no_pipeline, chunks, leaders))
    left_out = df.attrs.get("left_out") or []
    if left_out:  # said, not silently dropped: the help promises one row per combination
        sys.stderr.write(f"note: {len(left_out)} combination(s) the model cannot answer left out "
                         f"(first: {left_out[0]})\n")
    if format_ == "json":
        # a field one backend leaves empty (NCCL's launch overhead, the ideal model's lower bound)
        # is NaN in the other backends' rows of a mixed sweep: null, not a non-finite time
        records = [{key: None if isinstance(value, float) and value != value else value
                    for key, value in record.items()} for record in df.to_dict("records")]
        if output is None:
            print_json(records)
            return
        import json

        text = json.dumps(records, indent=2, default=str) + "\n"
    elif format_ == "csv":
        text = flat(df).to_csv(index=False)
    else:
        text = _text(df) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    inputs = [p for p in (clusters or []) + (links or []) if p.endswith(".toml")]
    written = write_outputs({"output": (output, text)}, inputs)
    echo(f"wrote {len(df)} rows to {printable(written['output'])}", err=True)
