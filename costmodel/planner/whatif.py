"""Re-running the planner's model on changed hardware: sensitivity of the best plan, what-ifs.

Sensitivity keeps the best plan fixed and scales one input: every link's bandwidth (intra-node
and network together), every link's latency, or the MFU, by ``SENSITIVITY_FACTORS``. The
what-if re-plans with the bottleneck level's bandwidth doubled (then halved) to show which
choice would change, on the configurations that can still win
(:func:`costmodel.planner.explain.what_if`). Under the nccl backend NCCL's own latency tables apply, so the latency
rows do not move (the profile's link latencies feed the ideal model only): where every collective of
the plan came from NCCL's model they reuse its times (``CommTables.link_latency_free``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from costmodel.planner import grid
from costmodel.training import workloads
from dpbase.values import replace

SENSITIVITY_FACTORS = (0.5, 1.5)
# Tried in order; the first that changes the chosen plan is reported.
WHAT_IF_BANDWIDTH_FACTORS = (2.0, 0.5)
SENSITIVITY_PARAMETERS = ("link bandwidth", "link latency", "MFU")


def scaled_system(system: Any, *, intra_bandwidth: float = 1.0, inter_bandwidth: float = 1.0,
                  latency: float = 1.0) -> Any:
    """A copy of ``system`` with scaled link bandwidths and latencies (renamed to say so)."""
    intra = replace(system.intra_link, latency_s=system.intra_link.latency_s * latency)
    nic = replace(system.nic_link, latency_s=system.nic_link.latency_s * latency)
    name = (f"{system.name} (intra bw x{intra_bandwidth:g}, network bw x{inter_bandwidth:g}, "
            f"latency x{latency:g})")
    from hardware.given import derived_system

    return derived_system(system, name=name, intra_link=intra, nic_link=nic,
                   intra_bandwidth_Bps=system.intra_bandwidth_Bps * intra_bandwidth,
                   nic_bandwidth_Bps=system.nic_bandwidth_Bps * inter_bandwidth)


def single_space(space: grid.Space, index: tuple[int, ...]) -> grid.Space:
    """The one configuration at ``index`` as a sweep space."""
    a, z, d, u, c = index
    return grid.Space(algorithms=(space.algorithms[a],), zero_stages=(space.zero_stages[z],),
                      grad_dtypes=(space.grad_dtypes[d],), bucket_bytes=(space.bucket_bytes[u],),
                      layouts=(space.layouts[int(space.cell_layout[c])],),
                      cell_layout=np.zeros(1, dtype=int), micro_batch=space.micro_batch[c:c + 1],
                      accumulation=space.accumulation[c:c + 1])


def subspace(space: grid.Space, mask) -> tuple[grid.Space, tuple[np.ndarray, ...]]:
    """The smallest sub-space of ``space`` holding every configuration where ``mask`` (shaped
    like the space) is true, as the kept values of each axis, with their indices into ``space``
    (increasing: the flat order of the kept configurations, which breaks the last ties, is
    theirs in the whole space)."""
    mask = np.asarray(mask)
    kept = tuple(np.flatnonzero(mask.any(axis=tuple(j for j in range(mask.ndim) if j != axis)))
                 for axis in range(mask.ndim))
    a, z, d, u, c = kept
    used = sorted({int(i) for i in space.cell_layout[c]})
    renumber = np.zeros(len(space.layouts), dtype=int)
    renumber[used] = np.arange(len(used))
    sub = grid.Space(algorithms=tuple(space.algorithms[i] for i in a),
                     zero_stages=tuple(space.zero_stages[i] for i in z),
                     grad_dtypes=tuple(space.grad_dtypes[i] for i in d),
                     bucket_bytes=tuple(space.bucket_bytes[i] for i in u),
                     layouts=tuple(space.layouts[i] for i in used), cell_layout=renumber[space.cell_layout[c]],
                     micro_batch=space.micro_batch[c], accumulation=space.accumulation[c])
    return sub, kept


def feasible_subspace(sweep: grid.Sweep) -> tuple[grid.Space, tuple[np.ndarray, ...]]:
    """The :func:`subspace` of every configuration of ``sweep`` that runs and fits in memory
    (``sweep.feasible``: neither depends on link bandwidth or latency, so no other
    configuration can win on scaled links)."""
    return subspace(sweep.space, sweep.feasible)


def _variant(parameter: str, factor: float, setting, system):
    if parameter == "link bandwidth":
        return setting, scaled_system(system, intra_bandwidth=factor, inter_bandwidth=factor)
    if parameter == "link latency":
        return setting, scaled_system(system, latency=factor)
    return replace(setting, mfu=min(workloads.max_mfu(setting.workload), setting.mfu * factor)), system


def sensitivity(sweep: grid.Sweep, setting, system, index, tables: grid.CommTables | None = None) -> list[dict]:
    """Throughput of the best plan with each input scaled by 0.5× and 1.5×.

    One sweep evaluates every variant: the plan's configuration repeated once per variant, each
    repeat with its own collective times (the scaled hardware's; the unscaled hardware's for the
    MFU rows, taken from the plan's own ``tables`` when given) and its own MFU. Everything else a
    sweep computes is elementwise, so each repeat is exactly the sweep of that variant alone.
    """
    space = single_space(sweep.space, index)
    base = float(sweep.samples_per_s[index])
    variants = [(parameter, factor, *_variant(parameter, factor, setting, system))
                for parameter in SENSITIVITY_PARAMETERS for factor in SENSITIVITY_FACTORS]
    same = _single_tables(tables, sweep.space, index) if tables is not None else \
        grid.setting_tables(setting, system, space)
    per_variant = []
    for parameter, _, varied_setting, varied_system in variants:
        # the MFU rows change no link; the latency rows change nothing NCCL's model reads
        unchanged = varied_system is system or (parameter == "link latency" and same.link_latency_free)
        per_variant.append(same if unchanged else grid.setting_tables(varied_setting, varied_system, space))
    count = len(variants)
    repeated = replace(space, layouts=space.layouts * count, cell_layout=np.arange(count),
                       micro_batch=np.repeat(space.micro_batch, count),
                       accumulation=np.repeat(space.accumulation, count))
    mfu = np.array([varied_setting.mfu for _, _, varied_setting, _ in variants])  # per repeat (the cell axis)
    result = grid.sweep(replace(setting, mfu=mfu), system, repeated, _joined(per_variant))
    samples = result.samples_per_s.reshape(count)
    return [{"parameter": parameter, "factor": factor, "samples_per_s": float(value),
             "change": float(value) / base - 1.0}
            for (parameter, factor, _, _), value in zip(variants, samples)]


def _single_tables(tables: grid.CommTables, space: grid.Space, index) -> grid.CommTables:
    """``tables`` (of ``space``) at the one configuration ``index``, as :func:`single_space`'s."""
    a, z, d, u, c = index
    layout = int(space.cell_layout[c])
    at = (..., slice(a, a + 1), slice(z, z + 1), slice(d, d + 1), slice(u, u + 1), slice(layout, layout + 1))
    return replace(tables, **{name: _each_array(lambda array: array[at], getattr(tables, name))
                              for name in grid.TABLE_ARRAYS})


def _joined(parts: list[grid.CommTables]) -> grid.CommTables:
    """Single-layout tables side by side along the layout axis (the last)."""
    def join(name: str):
        values = [getattr(part, name) for part in parts]
        if isinstance(values[0], tuple):  # a field per bucket kind
            return tuple(np.concatenate(column, axis=-1) for column in zip(*values))
        return None if values[0] is None else np.concatenate(values, axis=-1)

    return replace(parts[0], **{name: join(name) for name in grid.TABLE_ARRAYS},
                   link_latency_free=all(part.link_latency_free for part in parts))


def _each_array(function, value):
    """``function`` of an array field of :class:`grid.CommTables`, or of each array of a tuple field."""
    if value is None:
        return None
    return tuple(function(array) for array in value) if isinstance(value, tuple) else function(value)


def bottleneck_level(space: grid.Space) -> str:
    """'network' when any swept layout spans nodes, else 'intra-node'."""
    return "network" if any(nodes > 1 for nodes, _ in space.layouts) else "intra-node"


def what_if_system(system, space: grid.Space, factor: float) -> tuple[str, Any]:
    """(label, system) with the bottleneck level's bandwidth scaled by ``factor``."""
    if bottleneck_level(space) == "network":
        return f"{factor:g}x inter-node bandwidth", scaled_system(system, inter_bandwidth=factor)
    return f"{factor:g}x intra-node bandwidth", scaled_system(system, intra_bandwidth=factor)
