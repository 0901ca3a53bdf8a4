"""What an integrator's program passes, answered or refused with one InputError naming the field
(review, 2026-11-29: each of these raised a raw AttributeError, TypeError, ValueError or
OverflowError, or was silently read as something else)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import costmodel
import hardware
from costmodel.nccl import nccl_time, topology_for
from dpbase.errors import DpcostError, InputError

CLUSTER_FILE = pathlib.Path(__file__).resolve().parents[1] / "data" / "hardware" / "my_cluster.toml"


def _plots():
    import costmodel.plots

    return costmodel.plots


def _calibrated(config, solved):
    from costmodel.training import measured_rate

    return measured_rate.calibrated(config, solved)


@pytest.mark.parametrize("call, field", [
    (lambda: costmodel.predict("all-reduce", "1GiB", 5, cluster="dgx-h100", nodes=2), "algorithm"),
    (lambda: costmodel.predict("all-reduce", "1GiB", "", cluster="dgx-h100", nodes=2), "algorithm"),
    (lambda: costmodel.predict("all-reduce", "1GiB", 0, cluster="dgx-h100", nodes=2), "algorithm"),
    (lambda: costmodel.predict("all-reduce", "1GiB", np.array(8), cluster="dgx-h100", nodes=2), "algorithm"),
    (lambda: costmodel.predict("all-reduce", "1GiB", cluster="dgx-h100", backend=""), "backend"),
    (lambda: costmodel.comm_model("dgx-a100", nodes=2).time_s("all-reduce", "1GB"), "size_bytes"),
    (lambda: costmodel.comm_model("dgx-a100", nodes=2).time_s("all-reduce", float("inf")), "size_bytes"),
    (lambda: costmodel.comm_model("dgx-a100", nodes=2).time_s("all-reduce", None), "size_bytes"),
    (lambda: nccl_time("all-reduce", float("inf"), topology_for("dgx-h100", nodes=2)), "size_bytes"),
    (lambda: nccl_time("all-reduce", "1GiB", topology_for("dgx-h100", nodes=2)), "size_bytes"),
    (lambda: nccl_time("all-reduce", 1e30, topology_for("dgx-h100", nodes=2)), "size_bytes"),
    (lambda: topology_for("dgx-h100", nodes=2.0), "nodes"),
    (lambda: topology_for(42), "system"),
    (lambda: costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, losses=None), "losses"),
    (lambda: costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, jitter_cv=None), "jitter_cv"),
    (lambda: costmodel.iteration("resnet-50", "dgx-1", {"micro_batch": 256}), "config"),
    (lambda: costmodel.measured_mfu("gpt2", "dgx-h100", None, 1000), "config"),
    # calibration text that is not text was taken and printed as the MFU's source (review, 2026-11-30)
    (lambda: costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, mfu=0.3, mfu_calibration=3), "mfu_calibration"),
    (lambda: costmodel.plan("gpt2", "dgx-h100", global_batch=64, mfu=0.3, mfu_calibration=5), "mfu_calibration"),
    # raw AttributeError/TypeError/KeyError from inside (review, 2026-11-30)
    (lambda: nccl_time("all-reduce", 1e6, None), "topo"),
    (lambda: _calibrated(costmodel.TrainingConfig(micro_batch=8), None), "solved"),
    (lambda: _plots().plan_figure({}), "plan"),
    (lambda: _plots().schedule_figure("all-reduce", "ring", 4.0), "ranks"),
    (lambda: _plots().breakdown_figure(None, None), "breakdowns"),
    (lambda: _plots().step_breakdown(None), "setup"),
    (lambda: _plots().write_html(None, "unused.html"), "fig"),
    (lambda: costmodel.predict("all-reduce", "1GiB", ranks=8, link=42), "link"),
])
def test_refused_by_name(call, field):
    with pytest.raises(InputError, match=f"^{field}: got"):
        call()


def test_taken_as_a_program_passes_them():
    """A pathlib.Path for a cluster, a hardware.Link object, a text size for predict_on_cluster,
    NCCL's spelling of a primitive on the ideal backend, a 0-d array among the planner's buckets,
    a system name for topology_for: each answers what its plain form answers."""
    as_text = costmodel.predict("all-reduce", "1GiB", cluster=str(CLUSTER_FILE), nodes=2).time_s
    assert costmodel.predict("all-reduce", "1GiB", cluster=CLUSTER_FILE, nodes=2).time_s == as_text
    assert costmodel.iteration("gpt2", CLUSTER_FILE, micro_batch=4).total_s == \
        costmodel.iteration("gpt2", str(CLUSTER_FILE), micro_batch=4).total_s
    assert costmodel.plan("gpt2", CLUSTER_FILE, global_batch=64, explain=False).best.total_s > 0
    link = hardware.load_link("ib-ndr")
    assert costmodel.predict("all-reduce", "1GiB", ranks=8, link=link).time_s == \
        costmodel.predict("all-reduce", "1GiB", ranks=8, link="ib-ndr").time_s
    assert costmodel.predict_on_cluster("all-reduce", "ring", "dgx-a100", nodes=2, size_bytes="1GB").time_s == \
        costmodel.predict_on_cluster("all-reduce", "ring", "dgx-a100", nodes=2, size_bytes=1e9).time_s
    ideal = costmodel.comm_model("dgx-a100", nodes=2, backend="ideal")
    assert ideal.time_s("allreduce", 1e6) == ideal.time_s("all-reduce", 1e6) > 0
    arrays = costmodel.plan("gpt2", "dgx-h100", global_batch=64, bucket_bytes=np.array(25 * 2**20), explain=False)
    plain = costmodel.plan("gpt2", "dgx-h100", global_batch=64, bucket_bytes=25 * 2**20, explain=False)
    assert arrays.best.total_s == plain.best.total_s
    assert topology_for("dgx-h100", nodes=2) == topology_for(hardware.load_system("dgx-h100"), nodes=2)
    with pytest.raises(DpcostError):  # NCCL's model on AMD is still refused, by name
        topology_for("mi300x-8x")


def test_second_review_of_the_new_paths():
    """(review, 2026-11-29, second round) each case as it was found."""
    from costmodel.cluster.comm import hybrid_groups
    from costmodel.cluster.mapping import rail_system
    from costmodel.nccl.search import pcie_profile_scale
    from dpbase.values import replace

    # rails of two DGX boxes used four GPUs each cross the NICs: two boxes are not one domain
    for gpus in (4, 5):
        _, rails = hybrid_groups(costmodel.comm_model("aws-p4d", nodes=2, gpus_per_node=gpus))
        assert not rails.layout.one_domain
    tray = hardware.load_system("gb200-nvl72-tray")
    assert rail_system(tray, 2).scaleup_domain_gpus == tray.scaleup_domain_gpus // tray.gpus_per_node
    # a PCIe profile's bandwidth against its GPU's generation, not its intra link's
    box = hardware.load_system("rtx4090-8x-pcie")
    assert pcie_profile_scale(replace(box, intra_link=hardware.load_link("pcie3"))) == 1.0
    # DeepSpeed's options refused under --sync fsdp by iteration as by plan
    with pytest.raises(InputError, match="^quantize_grads: got 'int4'; allowed: unset with sync fsdp"):
        costmodel.iteration("llama2-7b", "dgx-h100", nodes=2, micro_batch=1, sync="fsdp", quantize_grads=4)
    # qgZ over a group of one (hybrid on one-GPU nodes) exchanges and quantises nothing
    steps = [costmodel.iteration("llama2-7b", "h200-1x-roce", nodes=4, micro_batch=1, zero_stage=3, shard="hybrid",
                                 quantize_grads=bits).comm_s for bits in (None, 8, 4)]
    assert steps[0] == steps[1] == steps[2]
    # numpy sizes to nccl_time answered in Python floats; a switch is not a size
    assert type(nccl_time("all-reduce", np.float16(1000), topology_for("dgx-h100", nodes=2)).time_s) is float
    model = costmodel.comm_model("dgx-h100", nodes=2)
    model.time_s("all-reduce", 0)
    with pytest.raises(InputError, match="^size_bytes: got False"):
        model.time_s("all-reduce", False)
    # "all" with a name it includes gives each row once
    frame = costmodel.sweep("all-reduce", "1MiB", clusters="dgx-h100", algorithms=["all", "ring"])
    assert frame.algorithm.tolist().count("ring") == 1
    link = dict(ranks=[8, 16], alpha_s="5us", bandwidth_Bps="25GB/s")
    for order in (["all", "ring"], ["ring", "all"]):  # the bare link's grid rows and "all"'s alike
        assert costmodel.sweep("all-reduce", "1MiB", algorithms=order, **link).algorithm.tolist().count("ring") == 2
    # distinct questions keep their rows: auto beside the algorithm it picks
    assert len(costmodel.sweep("all-reduce", "1MB", clusters="dgx-h100", algorithms=["auto", "ring"])) == 2


def test_a_model_path_and_a_derived_count_out_of_range(tmp_path):
    huge = tmp_path / "huge.toml"
    huge.write_text("layers = 1000000\nhidden_size = 1000000\nvocab = 10\n")
    # named by the field typed, not the derived count (an audit, 2026-11-30)
    named = r"^model\.layers and model\.hidden_size: got '1000000 and 1000000'; allowed: a layer count and width "
    with pytest.raises(InputError, match=named):
        costmodel.iteration(str(huge), "dgx-h100", micro_batch=1)
    small = tmp_path / "small.toml"
    small.write_text("layers = 4\nhidden_size = 256\nvocab = 1000\n")
    assert costmodel.iteration(small, "dgx-h100", micro_batch=1).total_s == \
        costmodel.iteration(str(small), "dgx-h100", micro_batch=1).total_s


def test_a_profile_field_of_the_wrong_type_is_named_with_its_value():
    """A System or Gpu edited with dataclasses.replace and a string for a number was refused as
    "got 'TypeError'" (review, 2026-11-30): the field, its value and the type wanted."""
    import dataclasses

    system = hardware.load_system("dgx-h100")
    with pytest.raises(InputError, match=r"\.nic_bandwidth_Bps: got '8'; allowed: a number"):
        costmodel.predict("all-reduce", "1GiB", cluster=dataclasses.replace(system, nic_bandwidth_Bps="8"))
    gpu = dataclasses.replace(system.gpu, memory_bytes="80GB")
    with pytest.raises(InputError, match=r"\.gpu\.memory_bytes: got '80GB'; allowed: a number"):
        costmodel.iteration("gpt2", dataclasses.replace(system, gpu=gpu), micro_batch=8)
