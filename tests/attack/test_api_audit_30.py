"""What a read-only audit of the Python API found (2026-11-30, about 40,000 inputs): each case now
answers as the CLI does, or is one InputError naming what the caller typed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

import costmodel
import hardware
from cli import app
from costmodel.collectives.registry import entries
from dpbase.errors import InputError


@pytest.mark.parametrize("spelling", ["allreduce", "AllReduce", "all_reduce", " all-reduce"])
@pytest.mark.parametrize("cluster", ["dgx-h100", "mi300x-8x"])
def test_a_primitives_spellings_answer_on_a_cluster_as_on_a_link(spelling, cluster):
    """'allreduce' on a cluster was a ValueError traceback (CLI exit 1); it works on a link."""
    assert costmodel.predict(spelling, "1MiB", cluster=cluster).time_s == \
        costmodel.predict("all-reduce", "1MiB", cluster=cluster).time_s
    result = CliRunner().invoke(app, ["collective", "allreduce", "--cluster", "dgx-h100", "--size", "1MiB",
                                      "--backend", "ideal"])
    assert result.exit_code == 0 and "all-reduce" in result.output


def test_an_asynchronous_step_runs_on_the_parameter_servers_in_the_api_as_in_the_cli():
    """The API timed asynchronous=True over an all-reduce: 18.6 ms where the CLI says 98.6 ms."""
    api = costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, asynchronous=True).total_s
    shown = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2",
                                     "--micro-batch", "8", "--async", "--json"]).output
    import json

    assert api == pytest.approx(json.loads(shown)["total_s"], rel=1e-12)
    with pytest.raises(InputError, match="^algorithm: got 'ring'; allowed: parameter-server or auto with asynchronous"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, asynchronous=True, algorithm="ring")
    with pytest.raises(InputError, match="^algorithm: got 'rabenseifner'; allowed: auto with host_reduce"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, host_reduce=True, algorithm="rabenseifner")


def test_switches_and_objects_of_the_wrong_kind_are_refused_by_name():
    system = hardware.load_system("dgx-a100")
    with pytest.raises(InputError, match="^collnet: got 'false'; allowed: True or False"):
        costmodel.topology_for(system, nodes=4, collnet="false")  # was CollNet switched on
    topo = costmodel.topology_for(system)
    for keyword in ("protocol", "algorithm"):
        with pytest.raises(InputError, match=f"^{keyword}: got None;"):
            costmodel.nccl_time("all-reduce", 2**20, topo, **{keyword: None})
    with pytest.raises(InputError, match="^tables: got 5;"):
        costmodel.nccl_time("all-reduce", 2**20, topo, tables=5)
    with pytest.raises(InputError, match="^tables: got 5;"):
        costmodel.topology_for(system, tables=5)
    with pytest.raises(InputError, match="^algorithms: got 5;"):
        costmodel.plan("gpt2", "dgx-h100", global_batch=256, algorithms=5)
    with pytest.raises(InputError, match="^gamma_s_per_byte: got None;"):  # was NaN in every answer
        costmodel.evaluate_grid("all-reduce", "ring", 8, 1e6, 5e-6, 25e9, None)


def test_a_bucket_typed_as_text_needs_its_unit_in_the_api_too():
    with pytest.raises(InputError, match="^bucket_bytes: got '25';.*a unit is needed"):
        costmodel.plan("gpt2", "dgx-h100", nodes=2, global_batch=256, bucket_bytes="25")


@pytest.mark.parametrize(("call", "typed"), [
    (lambda: costmodel.predict("all-reduce", 1e9, ranks=8, alpha=5e-6, bandwidth_Bps=25e9), "alpha"),
    (lambda: costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, zero=2), "zero"),
    (lambda: costmodel.compare("all-reduce", ranks=8, size_bytes=1e9, alpha_s=5e-6, bandwidth_Bps=25e9, alpha=1),
     "alpha"),
])
def test_a_mistyped_keyword_is_named_as_typed(call, typed):
    """It was reported under the keyword it stands for ('alpha_s: got 5e-06; allowed: a keyword of
    predict (..., alpha_s, ...)'), telling the caller the keyword they need is not allowed."""
    with pytest.raises(InputError, match=f"^{typed}: got "):
        call()


def test_every_sweep_row_is_predicts_answer():
    """The fast path copied its first point's note onto every row: 400 of 600 rows differed from
    predict (the 0-byte note on 1 MiB rows, one rank's on eight, a pipeline's α = 0 split)."""
    differ = []
    for entry in entries():
        primitive, algorithm = entry.primitive.value, entry.algorithm.value
        for alpha in ("5us", "0s"):
            try:
                frame = costmodel.sweep(primitive, [0, 1, "1MiB"], ranks=[1, 2, 8], algorithms=algorithm,
                                        alpha_s=alpha, bandwidth_Bps="25GB/s")
            except InputError:
                continue
            for _, row in frame.iterrows():
                p = costmodel.predict(primitive, row["size_bytes"], algorithm, ranks=int(row["ranks"]), alpha_s=alpha,
                                      bandwidth_Bps="25GB/s")
                note = None if isinstance(row["note"], float) and math.isnan(row["note"]) else row["note"]
                if note != p.note or not math.isclose(row["time_s"], p.time_s, rel_tol=1e-9) \
                        or int(row["steps"]) != p.steps:
                    differ.append((primitive, algorithm, alpha, row["ranks"], row["size_bytes"]))
    assert differ == []


def test_numpy_counts_still_answer():
    assert costmodel.predict("all-reduce", "1MiB", cluster="dgx-h100", nodes=np.int64(2)).ranks == 16


def test_compare_takes_the_size_second_as_predict_does():
    """`costmodel.compare("all-reduce", "1GB", …)` was a TypeError traceback: the size was keyword-only
    (size_bytes=). It now comes second too; both at once, or none, is one error naming the field."""
    import costmodel
    from dpbase.errors import InputError

    link = {"ranks": 8, "alpha_s": "5us", "bandwidth_Bps": "25GB/s"}
    second = costmodel.compare("all-reduce", "1GB", **link)
    keyword = costmodel.compare("all-reduce", size_bytes=1e9, **link)
    assert [(p.algorithm, p.time_s) for p in second] == [(p.algorithm, p.time_s) for p in keyword]
    with pytest.raises(InputError, match="^size_bytes: got 1000000000.0; allowed: left out when size is given"):
        costmodel.compare("all-reduce", "1GB", size_bytes=1e9, **link)
    with pytest.raises(InputError, match="^size_bytes: got None; allowed: a message size"):
        costmodel.compare("all-reduce", **link)
