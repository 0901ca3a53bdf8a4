"""The Python API a planner author calls: one collective, or a table of them, on a link or a cluster.

:func:`predict` answers one query with the one :class:`Prediction` record, whatever the backend
(ideal α-β-γ, NCCL's model, RCCL's); :func:`sweep` answers the product of several axes as a
pandas DataFrame with one row per query and one column per ``Prediction`` field.

    >>> predict("all-reduce", "1GiB", cluster="dgx-h100", nodes=2).backend
    'nccl'
    >>> predict("all-reduce", 4e9, algorithm="ring", ranks=8, alpha_s=0, bandwidth_Bps=1e9).time_s
    7.0
    >>> predict("all-reduce", "ring", ranks=8, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9).time_s  # older form
    7.0
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from costmodel.apiwords import UnknownKeywordError, checks_keywords
from costmodel.cluster.query import PARAMETERS, SIZE_ALLOWED, Query, run_query
from costmodel.collectives.prediction import Prediction
from dpbase.errors import DpcostError, InputError, whole_count
from dpbase.units import parse_message_size, parse_time

if TYPE_CHECKING:
    import pandas

    from hardware import System

_QUERY_PARAMS = tuple(PARAMETERS)  # the algorithm parameters a query takes

# The query's checks (costmodel.cluster.query) speak the CLI's flags; the API's caller passed
# keyword arguments, so its errors name those instead (one set of checks, two spellings).
_KEYWORDS = {"alpha": "alpha_s", "bandwidth": "bandwidth_Bps", "gamma": "gamma_s_per_byte",
             "alpha-inter": "alpha_inter_s", "bandwidth-inter": "bandwidth_inter_Bps", "no-pipeline": "pipelined=False"}


def _in_api_terms(error: InputError) -> InputError:
    """``error`` in this API's keywords (:func:`costmodel.apiwords.in_api_terms`)."""
    from costmodel.apiwords import in_api_terms

    return in_api_terms(error, _KEYWORDS)


def predict(primitive: str, size: str | float | None = None, algorithm: str | None = None, *,
            cluster: str | System | None = None, nodes: int = 1, gpus_per_node: int | None = None,
            backend: str | None = None, stack: str | None = None, link: str | None = None,
            ranks: int | None = None, alpha_s: float | str | None = None, bandwidth_Bps: float | str | None = None,
            gamma_s_per_byte: float | str = 0.0, alpha_inter_s: float | str | None = None,
            bandwidth_inter_Bps: float | str | None = None, size_bytes: float | None = None,
            _cli_words: bool = False, **params: Any) -> Prediction:
    """Predict one collective on a cluster (``cluster=``), a link profile (``link=``) or bare α/β.

    ``size`` is bytes or text with a unit ("256MiB"). ``algorithm`` is "auto" (on a cluster: the
    realistic stack's choice; on a link: the fastest textbook algorithm), or a name. ``backend``
    None/"auto" is the realistic one on a cluster (NCCL's model on NVIDIA, RCCL's on AMD) and the
    ideal model elsewhere. The older form ``predict(primitive, algorithm, ranks=, size_bytes=,
    alpha_s=, bandwidth_Bps=)`` still works. ``algorithm="all"`` answers the fastest of them here
    (:func:`sweep` and :func:`compare` give every one).
    """
    return _rows(primitive, size, algorithm, cluster=cluster, nodes=nodes, gpus_per_node=gpus_per_node,
                 backend=backend, stack=stack, link=link, ranks=ranks, alpha_s=alpha_s, bandwidth_Bps=bandwidth_Bps,
                 gamma_s_per_byte=gamma_s_per_byte, alpha_inter_s=alpha_inter_s,
                 bandwidth_inter_Bps=bandwidth_inter_Bps, size_bytes=size_bytes, _cli_words=_cli_words, **params)[0]


def _rows(primitive, size=None, algorithm=None, *, cluster=None, nodes=1, gpus_per_node=None, backend=None,
          stack=None, link=None, ranks=None, alpha_s=None, bandwidth_Bps=None, gamma_s_per_byte=0.0,
          alpha_inter_s=None, bandwidth_inter_Bps=None, size_bytes=None, _cli_words=False,
          **params: Any) -> list[Prediction]:
    """:func:`predict`'s rows: one, or with ``algorithm="all"`` every algorithm, fastest first."""
    try:
        if isinstance(size, str) and size_bytes is not None:  # older form: the algorithm came second
            if algorithm is not None:  # two algorithms: the second argument won silently (API review)
                raise InputError("algorithm", algorithm, f"left out when the second argument names the "
                                                         f"algorithm ({size!r}, with size_bytes=)")
            size, algorithm = size_bytes, size
        elif size is None:
            size = size_bytes
        elif size_bytes is not None:  # two sizes: the first won silently (API review, 2026-11-29)
            raise InputError("size_bytes", size_bytes, f"left out when size is given (size={size!r})")
        if size is None:
            raise InputError("size", None, SIZE_ALLOWED)
        algorithm = "auto" if algorithm is None else algorithm
        unknown = sorted(set(params) - set(_QUERY_PARAMS))
        if unknown:  # a misspelt keyword (nodez=2) was named as a wrong algorithm parameter
            import inspect

            keywords = [name for name, parameter in inspect.signature(predict).parameters.items()
                        if parameter.kind is parameter.KEYWORD_ONLY and not name.startswith("_")]
            raise UnknownKeywordError(unknown[0], params[unknown[0]], f"a keyword of predict ({', '.join(keywords)}) "
                                      f"or an algorithm parameter ({', '.join(_QUERY_PARAMS)})")
        query = Query(primitive=primitive, algorithm=algorithm, size=size, ranks=ranks, alpha=alpha_s,
                      bandwidth=bandwidth_Bps, gamma=gamma_s_per_byte, cluster=cluster, nodes=nodes,  # type: ignore[arg-type]
                      gpus_per_node=gpus_per_node, link=link, backend="auto" if backend is None else backend, stack=stack,
                      alpha_inter=alpha_inter_s, bandwidth_inter=bandwidth_inter_Bps, **params)  # type: ignore[arg-type]
        return run_query(query)
    except InputError as error:  # the query's checks speak the CLI's flags
        raise error if _cli_words else _in_api_terms(error) from None


def _axis(value: Any, name: str) -> list[Any]:
    """A scalar (or None) is an axis of one; strings (and bytes) are scalars, not sequences. A value given
    twice is one value of the axis (its rows would repeat), as the planner counts it once. ``name``:
    the keyword it came as, which an empty axis is refused by."""
    if value is None or isinstance(value, (str, bytes, bytearray, int, float)) or not isinstance(value, Iterable):
        return [value]
    values = list(value)
    if not values:
        raise InputError(name, value, "at least one value")
    return _once(values)


def _materialised(value: Any) -> Any:
    """An axis given as a one-pass iterable (a generator, map, iterator) as a list; every other value
    as it is (:func:`_axis` reads scalars, strings and profiles)."""
    if isinstance(value, Iterator):
        return list(value)
    return value


def _once(values: list[Any]) -> list[Any]:
    """``values`` in order, each once (an unhashable value, such as a profile given as a dict, is
    compared by equality)."""
    try:
        return list(dict.fromkeys(values))
    except TypeError:  # an unhashable value: one scan (axes of profiles are short)
        out: list[Any] = []
        for value in values:
            if value not in out:
                out.append(value)
        return out


@checks_keywords
def sweep(primitives: str | Iterable[str], sizes: str | float | Iterable[str | float], *,
          clusters: Any = None, nodes: int | Iterable[int] = 1, ranks: int | Iterable[int] | None = None,
          algorithms: str | Iterable[str] = "auto", backends: str | Iterable[str | None] | None = None,
          links: str | Iterable[str] | None = None, alpha_s: float | str | None = None,
          bandwidth_Bps: float | str | None = None, gamma_s_per_byte: float | str = 0.0,
          gpus_per_node: int | None = None, stack: str | None = None, servers: int | None = None,
          colocated: bool = False, pipelined: bool = True, chunks: int | None = None, leaders: bool = False,
          cli_words: bool = False) -> pandas.DataFrame:
    """Every combination of the axes as one DataFrame row (one column per ``Prediction`` field).

    Axes: primitives × clusters × nodes (on a cluster) or ranks (on a link / bare α-β) ×
    algorithms × backends × sizes. Each row is exactly what :func:`predict` returns for it; on
    a bare α/β link with named algorithms the formulas are evaluated vectorised over sizes and
    ranks at once (:func:`costmodel.collectives.evaluate.evaluate_grid`, the same formulas).
    A combination the model cannot answer (an algorithm a primitive lacks) is left out, its reason
    in ``frame.attrs["left_out"]``; a value no combination accepts is an error. Errors and reasons
    name this API's keywords (``alpha_s``), or with ``cli_words`` the CLI's flags (``--alpha``).

    The algorithm parameters (``servers``, ``colocated``, ``pipelined``, ``chunks``, ``leaders``,
    as :func:`predict` takes them) go to each swept algorithm that takes them (a ring among
    parameter-server rows is asked without them); one that no swept algorithm takes is refused.

        >>> frame = sweep("all-reduce", "1.2GB", ranks=[2, 10], algorithms="parameter-server",
        ...               alpha_s=0, bandwidth_Bps="1GB/s", colocated=True, servers=1)
        >>> frame["time_s"].round(6).tolist()   # seed 002: (N - 1) x 1.2 s at the one reducing rank
        [1.2, 10.8]
    """
    # each axis read once: a generator (an Iterable, as the hints allow) was empty by the second cluster
    primitives, sizes, clusters, nodes, ranks, algorithms, backends, links = (
        _materialised(axis) for axis in (primitives, sizes, clusters, nodes, ranks, algorithms, backends, links))
    try:
        from costmodel.cluster.query import given_fields
        from dpbase.errors import check_switch

        for name, value in (("colocated", colocated), ("pipelined", pipelined), ("leaders", leaders),
                            ("cli_words", cli_words)):  # cli_words="yes" was read by truth (API audit)
            check_switch(name, value)
        fields = given_fields(servers=servers, colocated=colocated, pipelined=pipelined, chunks=chunks, leaders=leaders)
        frame = _sweep(primitives, sizes, clusters=clusters, nodes=nodes, ranks=ranks, algorithms=algorithms,
                       backends=backends, links=links, alpha_s=alpha_s, bandwidth_Bps=bandwidth_Bps,
                       gamma_s_per_byte=gamma_s_per_byte, gpus_per_node=gpus_per_node, stack=stack, fields=fields)
    except InputError as error:
        raise error if cli_words else _in_api_terms(error) from None
    frame.attrs["left_out"] = [str(e if cli_words else _in_api_terms(e)) for e in frame.attrs["left_out"]]
    return frame


def _sweep(primitives, sizes, *, clusters, nodes, ranks, algorithms, backends, links, alpha_s, bandwidth_Bps,
           gamma_s_per_byte, gpus_per_node, stack, fields=None) -> pandas.DataFrame:
    """:func:`sweep`, its errors and ``left_out`` in the query's words (the errors themselves);
    ``fields``: the algorithm parameters given (:func:`costmodel.cluster.query.given_fields`)."""
    import pandas as pd

    from costmodel.cluster.query import check_fields_taken, fields_for
    from dpbase.errors import NotApplicableError

    fields = fields or {}
    if fields:  # each taken by a swept algorithm, before any row (never dropped silently)
        check_fields_taken(itertools.product(_named_once(_axis(primitives, "primitives"), _primitive_name),
                                             _named_once(_axis(algorithms, "algorithms"), _algorithm_name)), fields)

    if clusters is None and _axis(nodes, "nodes") != [1]:  # a link's ranks are ``ranks``: nodes belong to a cluster
        raise InputError("nodes", nodes, "only with clusters (a link or alpha_s/bandwidth_Bps takes ranks)")
    if clusters is not None and ranks is not None:  # dropped silently: 8 ranks answered for ranks=16 (API review)
        raise InputError("ranks", ranks, "left out with clusters (a cluster's ranks are nodes × GPUs per node)")
    size_list = _once([parse_message_size(s, "sizes") for s in _axis(sizes, "sizes")])  # 1MB and 1000KB are one size
    if gpus_per_node is not None:  # compared below before any row reads it ("8" was a TypeError)
        gpus_per_node = whole_count("gpus_per_node", gpus_per_node)
    if clusters is None and gpus_per_node is not None and gpus_per_node >= 1 and not any(
            _hierarchical(p, a) for p in _axis(primitives, "primitives") for a in _axis(algorithms, "algorithms")):
        # a link's node size is the hierarchical algorithm's alone: given to no row, it would be dropped
        raise InputError("--gpus-per-node", gpus_per_node, "only with --algorithm hierarchical among the algorithms "
                                                           "on a link or --alpha/--bandwidth (its ranks per node)")
    from costmodel.names import REDUCING_PRIMITIVES, primitive_named

    reducing = {p for p in _named_once(_axis(primitives, "primitives"), _primitive_name)
                if primitive_named(p) in REDUCING_PRIMITIVES}
    if not reducing and parse_time(gamma_s_per_byte, "gamma") > 0:  # taken by no row: refused, as predict does
        raise InputError("gamma", gamma_s_per_byte, "0 (the default): none of the swept primitives reduces")
    rows: list[dict[str, Any]] = []
    skipped: list[NotApplicableError] = []
    asked: set[tuple] = set()  # the questions answered so far (their axes' values), each once
    for primitive, cluster, link, algorithm, backend in itertools.product(
            _named_once(_axis(primitives, "primitives"), _primitive_name), _axis(clusters, "clusters"), _axis(links, "links"),
            _named_once(_axis(algorithms, "algorithms"), _algorithm_name), _axis(backends, "backends")):
        group = _axis(nodes, "nodes") if cluster is not None else _axis(ranks, "ranks")
        taken = fields_for(primitive, algorithm, fields)  # this algorithm's share of the parameters
        gamma = gamma_s_per_byte if primitive in reducing else 0.0  # the reduction's time, where one reduces
        # a bare α/β link, one named algorithm: one numpy grid (a node size needs the per-point path,
        # where predict hands it to the hierarchical algorithm)
        if (cluster is None and link is None and algorithm not in ("auto", "all") and gpus_per_node is None
                and backend in (None, "auto", "ideal")):
            try:
                found, refused = _grid_rows(primitive, algorithm, group, size_list, alpha_s, bandwidth_Bps,
                                            gamma, stack=stack, backend=backend, fields=taken)
                for row in found:  # the same questions as the per-point path asks (an "all" there)
                    question = (primitive, repr(None), repr(None), algorithm, repr(backend), row["ranks"],
                                row["size_bytes"])
                    if question not in asked:
                        asked.add(question)
                        rows.append(row)
                skipped.extend(refused)
            except NotApplicableError as error:
                skipped.append(error)
            continue
        # on a link the node size goes to the hierarchical rows alone (the others run over the one link)
        per_node = gpus_per_node if cluster is not None or _hierarchical(primitive, algorithm) or \
            (gpus_per_node is not None and gpus_per_node < 1) else None
        for count, size in itertools.product(group, size_list):
            where = {"nodes": count} if cluster is not None else {"ranks": count}
            try:  # "all": every algorithm's row (predict answers the fastest)
                found = _rows(primitive, size, algorithm, cluster=cluster, link=link, backend=backend, stack=stack,
                              _cli_words=True,
                              alpha_s=alpha_s, bandwidth_Bps=bandwidth_Bps, gamma_s_per_byte=gamma,
                              gpus_per_node=per_node, **where, **taken)
            except NotApplicableError as error:
                skipped.append(error)
                continue
            for p in found:  # a row asked twice ("all" and a name it includes) is one row, as a name given twice is
                named = p.algorithm if algorithm == "all" else algorithm  # auto's row is its own question
                question = (primitive, repr(cluster), repr(link), named, repr(backend), count, size)
                if question not in asked:
                    asked.add(question)
                    rows.append(p.to_dict())
    if not rows:
        raise skipped[0] if skipped else InputError("sweep", "no rows", "at least one answerable combination")
    if reducing and parse_time(gamma_s_per_byte, "gamma") > 0 and not any(row["primitive"] in reducing for row in rows):
        # the reducing rows all left out (NCCL's model refuses a γ): the γ reached no row (API audit, 2026-12-01)
        refused = [e for e in skipped if getattr(e, "field", None) == "gamma"]
        raise refused[0] if refused else InputError("gamma", gamma_s_per_byte, "a reduction time a swept row takes")
    frame = pd.DataFrame(rows, columns=list(Prediction.__dataclass_fields__))
    frame.attrs["left_out"] = skipped  # why each left-out combination was
    return frame


def _named_once(values: list[Any], named) -> list[Any]:
    """``values`` each under the name ``named`` gives it (``ring`` and ``Ring``, ``tree`` and
    ``double-binary-tree``, ``allreduce`` and ``all-reduce`` are one value of the axis), once; a
    value ``named`` does not know, or answers None for, stays as typed (its row says why)."""
    out = []
    for value in values:
        try:
            name = named(value)
        except DpcostError:
            name = None
        out.append(value if name is None else name)
    return _once(out)


def _algorithm_name(value: Any) -> str | None:
    """The registry's name of a typed algorithm, None for auto/all and for NCCL's in-network family
    (nvls, collnet …), which the query reads apart from ``in-network`` on a cluster."""
    from costmodel.names import Algorithm, algorithm_named

    if not isinstance(value, str) or value in ("auto", "all"):
        return None
    found = algorithm_named(value)
    return None if found is Algorithm.IN_NETWORK and found.value != value.strip().lower() else found.value


def _primitive_name(value: Any) -> str | None:
    from costmodel.names import primitive_named

    return primitive_named(value).value if isinstance(value, str) else None


def _hierarchical(primitive: str, algorithm: str) -> bool:
    """Whether ``algorithm`` names the registry's hierarchical ``primitive`` (the one that takes a
    bare link's node size); False for auto, all and names the registry lacks."""
    from costmodel.collectives.registry import get
    from dpbase.errors import DpcostError

    if algorithm in ("auto", "all"):
        return False
    try:
        return get(primitive, algorithm).hierarchical
    except DpcostError:  # unknown here: the row's own prediction says why
        return False


def _grid_rows(primitive: str, algorithm: str, ranks: list[Any], sizes: list[float], alpha_s: Any,
               bandwidth_Bps: Any, gamma_s_per_byte: Any, *, stack: str | None = None,
               backend: str | None = None, fields: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """Rows of one named algorithm on a bare α/β link: the formulas evaluated as one numpy grid
    (its first point answered by :func:`predict`, whose checks refuse what the grid would ignore),
    and the errors of the rank counts the algorithm cannot take (each left out alone, as the
    per-point path leaves it out)."""
    import numpy as np

    from costmodel.collectives.evaluate import check_chunks, evaluate_grid, max_chunks, resolve
    from costmodel.collectives.registry import get
    from dpbase.errors import NotApplicableError
    from dpbase.units import parse_bandwidth, parse_time

    ranks = [whole_count("ranks", rank) for rank in ranks]  # as predict takes them
    fields = fields or {}  # the query's fields are the formula's values (query.PARAMETERS)
    entry, skipped, taken = get(primitive, algorithm), [], []
    for count in ranks:  # a node size these ranks cannot fill (hierarchical's G): that count alone
        try:
            resolve(entry, count, dict(fields))
            taken.append(count)
        except NotApplicableError as error:
            skipped.append(error)
    kept = []
    for size in sizes:  # a chunk count a size cannot split into: that size alone, as the per-point path
        try:
            check_chunks(entry, size, dict(fields))
            kept.append(size)
        except NotApplicableError as error:
            skipped.append(error)
    if not taken or not kept:
        return [], skipped
    ranks, sizes = taken, kept
    alpha, bw = parse_time(alpha_s, "alpha_s"), parse_bandwidth(bandwidth_Bps, "bandwidth_Bps")
    gamma = parse_time(gamma_s_per_byte, "gamma_s_per_byte")
    n_grid, size_grid = np.meshgrid(np.asarray(ranks, dtype=float), np.asarray(sizes, dtype=float), indexing="ij")
    out = evaluate_grid(primitive, algorithm, n_grid, size_grid, alpha, bw, gamma, **fields)
    # the fields the grid does not compute (note, params …) from predict at a point of the same kind:
    # one rank, 0 bytes, or a pipeline split into every element at α = 0, has its own note ("0 bytes:
    # nothing to move"); the first point's was copied onto every row (API audit, 2026-11-30)
    templates: dict[tuple, dict[str, Any]] = {}

    def template_for(count: int, size: float, split_most: bool = False) -> dict[str, Any]:
        # split_most: a pipeline's α = 0 split, which has its note; a hierarchy's rank count decides
        # whether it is one node, with its own note (the 8-rank note rode on a 16-rank row)
        kind = (count == 1, size == 0, split_most, count if entry.hierarchical else None)
        if kind not in templates:
            templates[kind] = predict(primitive, size, algorithm, ranks=count, alpha_s=alpha, bandwidth_Bps=bw,
                                      gamma_s_per_byte=gamma, stack=stack, backend=backend, _cli_words=True,
                                      **fields).to_dict()
        return templates[kind]

    template_for(int(ranks[0]), sizes[0])  # its checks refuse what the grid would ignore, first
    renamed = {"sent_max": "bytes_sent_max", "recv_max": "bytes_received_max", "total": "bytes_total",
               "aux_max": "bytes_aux_max"}
    grid = {renamed.get(key, key): np.broadcast_to(value, n_grid.shape) for key, value in out.items()}
    grid["steps"] = grid["steps"] + grid.pop("steps_inter")
    chunks = grid.pop("chunks", None)
    rows = []
    for i, j in itertools.product(range(len(ranks)), range(len(sizes))):
        split_most = chunks is not None and 1 < int(max_chunks(sizes[j])) == int(chunks[i, j])
        template = template_for(int(ranks[i]), float(sizes[j]), split_most)
        row = dict(template, ranks=int(ranks[i]), size_bytes=float(sizes[j]))
        for key, values in grid.items():
            if key in row:
                value = values[i, j].item()
                row[key] = int(value) if key == "steps" and float(value).is_integer() else value
        if chunks is not None:
            row["params"] = {**template["params"], "chunks": int(chunks[i, j])}
        rows.append(row)
    return rows, skipped
