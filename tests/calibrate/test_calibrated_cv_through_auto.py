"""The calibrated-cluster issue's goal, end to end: fit a cluster profile on every other size of
a validation log, then predict the held-out sizes through ``--algorithm auto`` (the public
``predict``), through ``iteration``'s comm model (``CommModel``) and through ``plan``'s comm
tables (``CommCache``): cross-validated median error ≤ 5 % on every non-ambiguous log."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import numpy as np
import pytest

import hardware
from costmodel.calibrate.cluster_profile import cluster_profile, measured_curves
from costmodel.calibrate.parse import parse_file
from costmodel.cluster.api import predict
from costmodel.cluster.comm import comm_model
from costmodel.planner.comm import CommCache

DATA = Path(__file__).parents[1] / "data" / "calibration"
GOAL = 0.05
# each log with its bundled base system (the logs' hardware), ranks and nodes from the manifest
LOGS = {
    "raw/abci_a_1n.txt": "a100-abci-8x", "raw/abci_a_2n.txt": "a100-abci-8x", "raw/abci_a_4n.txt": "a100-abci-8x",
    "raw/abci_a_8n.txt": "a100-abci-8x", "raw/abci_a_16n.txt": "a100-abci-8x",
    "raw/abci_v_1n.txt": "v100-abci-4x", "raw/abci_v_2n.txt": "v100-abci-4x", "raw/abci_v_8n.txt": "v100-abci-4x",
    "raw/l40s_4x_pcie_ring.txt": "l40s-4x-pcie", "raw/l40s_4x_pcie_tree.txt": "l40s-4x-pcie",
    "raw/rtx4090_8x_pcie4_p2pon.txt": "rtx4090-8x-pcie-p2p", "raw/rtx4090_8x_pcie4_p2poff.txt": "rtx4090-8x-pcie",
    "raw/mi300x_8x_single_aac8.txt": "mi300x-8x", "raw/mi300x_2x8_roce_aac10.txt": "mi300x-8x",
    "raw/mi355x_2x8_pollara400_aac14.txt": "mi355x-8x",
}


def _entry(name: str) -> dict:
    manifest = tomllib.loads((DATA / "manifest.toml").read_text(encoding="utf-8"))["log"]
    return next(e for e in manifest if e["file"] == name)


def _held_out_errors(name: str) -> dict[str, np.ndarray]:
    entry, log = _entry(name), parse_file(DATA / name)
    log = dataclasses.replace(log, collective=entry["collective"], ranks=entry["ranks"], nodes=entry["nodes"])
    system = hardware.load_system(LOGS[name])
    nodes, per_node = entry["nodes"], entry["ranks"] // entry["nodes"]
    distinct = sorted({r.size_bytes for r in log.rows})
    errors: dict[str, list[float]] = {"predict auto": [], "CommModel": [], "CommCache": []}
    for fold in (0, 1):
        train = {s for i, s in enumerate(distinct) if i % 2 != fold}
        fitted = dataclasses.replace(log, rows=tuple(r for r in log.rows if r.size_bytes in train))
        calibrated = cluster_profile(system, measured_curves([fitted], system, nodes=nodes).curves)
        model = comm_model(calibrated, nodes, per_node)
        table = CommCache(calibrated, model.backend).function(nodes, per_node, "auto")
        for row in log.rows:
            if row.size_bytes in train:
                continue
            for measured in (row.time_oop_s, row.time_ip_s):
                if not measured:
                    continue
                answers = {"predict auto": predict(entry["collective"], row.size_bytes, cluster=calibrated,
                                                   nodes=nodes, gpus_per_node=per_node).time_s,
                           "CommModel": model.time_s(entry["collective"], row.size_bytes),
                           "CommCache": table(entry["collective"], row.size_bytes)}
                for path, value in answers.items():
                    errors[path].append(value / measured - 1)
    return {path: np.abs(np.array(values)) for path, values in errors.items()}


@pytest.mark.parametrize("name", sorted(LOGS))
def test_held_out_sizes_through_auto_and_the_comm_models(name):
    errors = _held_out_errors(name)
    medians = {path: float(np.median(e)) for path, e in errors.items()}
    assert all(m <= GOAL for m in medians.values()), medians
    # the three paths answer from the same measured curve
    assert np.allclose(errors["predict auto"], errors["CommModel"]) and np.allclose(errors["CommModel"],
                                                                                     errors["CommCache"])
