"""``dpcost plot KIND … -o FILE.html [--open]``: write an interactive chart as offline HTML."""

from typing import Annotated, Any, Optional

from costmodel.commands import complete
from costmodel.commands.common import algorithm_fields, cli_errors, comma_counts, echo, print_json
from costmodel.commands.options import (
    ALPHA,
    CHUNKS,
    COLOCATED,
    GPUS_PER_NODE,
    LEADERS,
    MICRO_BATCH,
    NO_PIPELINE,
    NODES,
    SERVERS,
    Argument,
    Option,
)

OUT = Annotated[str, Option("--output", "-o", help="HTML file to write, e.g. sweep.html.")]
OPEN = Annotated[bool, Option("--open", help="Open the file in the default browser.")]
JSON = Annotated[bool, Option("--json", help="Print what was written as JSON.")]
PRIMITIVE = Annotated[str, Argument(help="The collective primitive, e.g. all-reduce.", autocompletion=complete.primitives)]
CLUSTER = Annotated[Optional[str], Option("--cluster", help="A system profile name or TOML path.", autocompletion=complete.systems)]
BANDWIDTH = Annotated[Optional[str], Option("--bandwidth", help="Link bandwidth per direction, e.g. 25GB/s.")]
RANKS = Annotated[Optional[int], Option("--ranks", "-N", help="Ranks N (with --alpha/--bandwidth).")]
BACKEND = Annotated[str, Option("--backend", help="auto (realistic on a cluster: NCCL's model on NVIDIA, RCCL's tuning model on AMD; ideal on a bare link), ideal, nccl or rccl.")]
MIN_SIZE = Annotated[str, Option("--min-size", help="Smallest size, e.g. 8B.")]
MAX_SIZE = Annotated[str, Option("--max-size", help="Largest size, e.g. 4GiB.")]
ALGORITHMS = Annotated[Optional[list[str]], Option("--algorithm", "-a", help="An algorithm to draw (repeat; default all).")]
PLAN_ROWS = 100_000  # rank every feasible plan so every cell of the landscape is filled
RANK_LIST = Annotated[Optional[str], Option("--rank-counts", help="Comma-separated rank counts, e.g. 2,4,8,16,32,64 (default: powers of two up to 64 for scaling, 256 for best-map; on a cluster, those dividing one node, then whole nodes).")]


def _finish(fig: Any, output: str, open_: bool, json_: bool, kind: str, inputs: tuple = ()) -> None:
    from costmodel.plots import write_html
    from dpbase.text import printable

    path = write_html(fig, output, inputs)
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())
    if json_:
        print_json({"kind": kind, "output": str(path), "traces": len(fig.data), "frames": len(fig.frames)})
    else:
        echo(f"wrote {printable(path)}")


def _hardware(primitive, cluster, nodes, gpus_per_node, alpha, bandwidth, ranks, backend, params=()) -> Any:
    from costmodel.names import primitive_named
    from costmodel.plots import Hardware
    from costmodel.plots.common import check_sources

    primitive_named(primitive)  # primitive: got 'bogus'; allowed: one of …, before any work
    hardware = Hardware(cluster=cluster, nodes=nodes, gpus_per_node=gpus_per_node, alpha=alpha, bandwidth=bandwidth,
                        ranks=ranks, backend=backend, params=tuple(params))
    check_sources(hardware)  # before any work; the figure resolves the backend (plots.common.check_backend)
    return hardware


def _refuse_inputs(output: str, *inputs: str | None) -> None:
    """Before any work: the chart is HTML and must not replace a file the command reads."""
    from dpbase.safeio import check_html_path, check_outputs

    check_html_path("output", output)
    check_outputs({"output": output}, inputs)


def _rank_counts(text: str | None, hardware: Any, default_max: int) -> tuple[int, ...]:
    """The user's comma-separated rank counts, or the hardware's defaults up to ``default_max``."""
    from dpbase.errors import InputError
    from dpbase.limits import MAX_RANK_COUNTS, MAX_RANKS

    if text is None:
        return hardware.default_rank_counts(default_max)
    counts = comma_counts(text, "rank_counts", "2,4,8")
    if min(counts) < 1 or max(counts) > MAX_RANKS or len(counts) > MAX_RANK_COUNTS:
        raise InputError("rank_counts", text, f"up to {MAX_RANK_COUNTS} comma-separated integers from 1 to "
                                              f"{MAX_RANKS}, e.g. 2,4,8")
    return counts


@cli_errors
def sweep(primitive: PRIMITIVE, output: OUT, cluster: CLUSTER = None, nodes: NODES = 1, gpus_per_node: GPUS_PER_NODE = None,
          alpha: ALPHA = None, bandwidth: BANDWIDTH = None, ranks: RANKS = None, backend: BACKEND = "auto",
          min_size: MIN_SIZE = "8B", max_size: MAX_SIZE = "4GiB", algorithm: ALGORITHMS = None,
          measured: Annotated[Optional[str], Option("--measured", help="An nccl-tests log to overlay.")] = None,
          servers: SERVERS = None, colocated: COLOCATED = False, no_pipeline: NO_PIPELINE = False,
          chunks: CHUNKS = None, leaders: LEADERS = False, open_: OPEN = False, json_: JSON = False) -> None:
    """Time and busbw against size per algorithm (log-log), optionally over a measured nccl-tests log.

    Example: dpcost plot sweep all-reduce --cluster dgx-h100 --nodes 2 -o sweep.html
    """
    from costmodel.plots import sweep_figure

    _refuse_inputs(output, cluster, measured)
    hw = _hardware(primitive, cluster, nodes, gpus_per_node, alpha, bandwidth, ranks, backend,
                   algorithm_fields(servers, colocated, no_pipeline, chunks, leaders).items())
    fig = sweep_figure(primitive, hw, min_size=min_size, max_size=max_size, algorithms=tuple(algorithm or ()),
                       measured_log=measured)
    _finish(fig, output, open_, json_, "sweep", (cluster, measured))


@cli_errors
def scaling(primitive: PRIMITIVE, output: OUT, size: Annotated[str, Option("--size", "-n", help="Message size, e.g. 1GiB.")],
            rank_counts: RANK_LIST = None, cluster: CLUSTER = None, gpus_per_node: GPUS_PER_NODE = None,
            alpha: ALPHA = None, bandwidth: BANDWIDTH = None, backend: BACKEND = "auto",
            algorithm: ALGORITHMS = None, servers: SERVERS = None, colocated: COLOCATED = False,
            no_pipeline: NO_PIPELINE = False, chunks: CHUNKS = None, leaders: LEADERS = False,
            open_: OPEN = False, json_: JSON = False) -> None:
    """Time against rank count at one size per algorithm, with the lower bound.

    Example: dpcost plot scaling all-reduce --size 1GiB --alpha 5us --bandwidth 25GB/s -o scaling.html
    """
    from costmodel.plots import scaling_figure

    _refuse_inputs(output, cluster)
    hw = _hardware(primitive, cluster, 1, gpus_per_node, alpha, bandwidth, None, backend,
                   algorithm_fields(servers, colocated, no_pipeline, chunks, leaders).items())
    fig = scaling_figure(primitive, hw, size=size, rank_counts=_rank_counts(rank_counts, hw, 64),
                         algorithms=tuple(algorithm or ()))
    _finish(fig, output, open_, json_, "scaling", (cluster,))


@cli_errors
def best_map(primitive: PRIMITIVE, output: OUT, rank_counts: RANK_LIST = None,
             cluster: CLUSTER = None, gpus_per_node: GPUS_PER_NODE = None, alpha: ALPHA = None, bandwidth: BANDWIDTH = None,
             backend: BACKEND = "auto", min_size: MIN_SIZE = "8B", max_size: MAX_SIZE = "4GiB",
             open_: OPEN = False, json_: JSON = False) -> None:
    """Heatmap of the winning algorithm over rank count × size (ideal model or NCCL's choice).

    Example: dpcost plot best-map all-reduce --cluster dgx-h100 --rank-counts 8,16,32,64 --backend nccl -o map.html
    """
    from costmodel.plots import best_map_figure

    _refuse_inputs(output, cluster)
    hw = _hardware(primitive, cluster, 1, gpus_per_node, alpha, bandwidth, None, backend)
    fig = best_map_figure(primitive, hw, rank_counts=_rank_counts(rank_counts, hw, 256), min_size=min_size, max_size=max_size)
    _finish(fig, output, open_, json_, "best-map", (cluster,))


@cli_errors
def breakdown(output: OUT, model: Annotated[str, Option(help="Preset name or parameter count (7B).", autocompletion=complete.models)],
              cluster: Annotated[list[str], Option("--cluster", help="A system profile (repeat to compare).", autocompletion=complete.systems)],
              micro_batch: MICRO_BATCH,
              nodes: Annotated[list[int], Option("--nodes", help="Nodes (repeat: one bar per value).")] = [1],  # noqa: B006
              accum: Annotated[int, Option(help="Gradient accumulation steps.")] = 1,
              algorithm: Annotated[list[str], Option("--algorithm", "-a", help="Algorithm (repeat).")] = ["auto"],  # noqa: B006
              zero: Annotated[int, Option(help="ZeRO stage: 0 (replicated), 1, 2 or 3.")] = 0,
              seq_len: Annotated[int | None, Option("--seq-len", help="Sequence length (default: the model's).")] = None,
              backend: BACKEND = "auto", open_: OPEN = False, json_: JSON = False) -> None:
    """Stacked bars of one training step for every cluster × nodes × algorithm given; a step that
    does not fit in the GPU's memory is marked above its bar.

    Example: dpcost plot breakdown --model llama2-7b --cluster dgx-h100 --nodes 1 --nodes 4 --micro-batch 1 --zero 3 -o b.html
    """
    from costmodel.plots import StepSetup, breakdown_figure, step_breakdown

    _refuse_inputs(output, *cluster, model)
    setups = [StepSetup(model=model, cluster=c, nodes=n, micro_batch=micro_batch, accumulation_steps=accum,
                        algorithm=a, backend=backend, zero_stage=zero, seq_len=seq_len)
              for c in cluster for n in nodes for a in algorithm]
    fig = breakdown_figure([step_breakdown(s) for s in setups], [s.label() for s in setups])
    _finish(fig, output, open_, json_, "breakdown", (*cluster, model))


@cli_errors
def plan(output: OUT, model: Annotated[str, Option(help="Preset name or parameter count (7B).", autocompletion=complete.models)],
         cluster: Annotated[str, Option(help="A system profile name or TOML path.", autocompletion=complete.systems)],
         global_batch: Annotated[int, Option("--global-batch", help="Samples per optimizer step.")],
         nodes: Annotated[int, Option(help="Nodes available.")] = 1, backend: BACKEND = "auto",
         x: Annotated[str, Option("--x", help="Horizontal axis: accumulation_steps, micro_batch or gpus.")] = "accumulation_steps",
         y: Annotated[str, Option("--y", help="Vertical axis: micro_batch, accumulation_steps or gpus.")] = "micro_batch",
         open_: OPEN = False, json_: JSON = False) -> None:
    """The planner's landscape: throughput over two swept axes, the recommendation starred.

    Example: dpcost plot plan --model llama2-7b --cluster dgx-h100 --nodes 4 --global-batch 512 -o plan.html
    """
    from costmodel.planner.recommend import plan as make_plan
    from costmodel.plots import plan_figure
    from costmodel.plots.planfig import check_axes
    from dpbase.errors import InputError

    _refuse_inputs(output, cluster, model)
    check_axes(x, y)  # before the planner ranks every plan
    try:
        found = make_plan(model, cluster, global_batch=global_batch, nodes=nodes, backend=backend, top=PLAN_ROWS,
                          explain=False, _cli_words=True)
    except InputError as error:
        if "--" not in error.allowed:
            raise
        # the planner's advice names `dpcost plan`'s options; this chart takes --nodes and --global-batch
        raise type(error)(error.field, error.value, f"{error.allowed} (plot plan takes --nodes and "
                                                    "--global-batch; dpcost plan takes the other options)") from None
    _finish(plan_figure(found.to_dict(), x=x, y=y), output, open_, json_, "plan", (cluster, model))


@cli_errors
def schedule(primitive: PRIMITIVE, algorithm: Annotated[str, Argument(help="The algorithm, e.g. ring.", autocompletion=complete.algorithms)],
             output: OUT, ranks: Annotated[int, Option("--ranks", "-N", help="Ranks (2 to 16).")] = 4,
             size: Annotated[str, Option("--size", "-n", help="Buffer size for the labels.")] = "1GiB",
             servers: Annotated[Optional[int], Option("--servers", help="Parameter servers S.")] = None,
             gpus_per_node: GPUS_PER_NODE = None,
             chunks: Annotated[Optional[int], Option("--chunks", help="Pipeline chunks k (default 1).")] = None,
             open_: OPEN = False, json_: JSON = False) -> None:
    """Animate an algorithm's schedule step by step (which chunk each rank holds and sends).

    Example: dpcost plot schedule all-reduce ring --ranks 4 -o ring.html
    """
    from costmodel.plots import schedule_figure

    _refuse_inputs(output)
    given = {"servers": servers, "gpus_per_node": gpus_per_node, "chunks": chunks}
    if algorithm == "hierarchical" and gpus_per_node is None:
        given["gpus_per_node"] = 2 if ranks % 2 == 0 else 1
    fig = schedule_figure(primitive, algorithm, ranks, size=size, **{k: v for k, v in given.items() if v is not None})
    _finish(fig, output, open_, json_, "schedule")


# `dpcost plot NAME`: its subcommands (cli builds the typer group from them).
HELP = "Interactive charts (plotly, offline HTML)."
SUBCOMMANDS = {"sweep": sweep, "scaling": scaling, "best-map": best_map, "breakdown": breakdown, "plan": plan, "schedule": schedule}
