"""NCCL constant tables: bundled data, version overlays, user overrides with named errors."""

import pytest

from costmodel.nccl import NcclGraph, NcclTopology, cost_table, known_versions, load_tables
from dpbase.errors import ProfileError, UnknownNameError


def test_bundled_constants_and_version():
    t = load_tables()
    assert t.version == "2.30.7"
    assert t.data["meta"]["commit"].startswith("5067397c")
    assert t.hw_latency_us("nvlink", "ring", "Simple") == 3.4
    assert t.arch_cap_GBps("ll_max", "hopper", 1) == 141.0
    assert t.arch_cap_GBps("per_channel_tree", "ampere", 5) == 17.8
    assert len(t.tree_correction("LL")) == 24
    assert set(known_versions()) >= {"2.30.7", "2.27.5", "2.21.5"}


def test_older_version_differences():
    old = load_tables(version="2.21.5")
    assert old.hw_latency_us("nvlink", "tree", "Simple") == 28.0
    assert old.refinement("allreduce_inter_steps_offset") == 0
    ring = NcclGraph(n_channels=12, bw_intra_GBps=30.0, bw_inter_GBps=30.0)
    nvls = NcclGraph(n_channels=8, bw_intra_GBps=40.0, bw_inter_GBps=60.0, pattern="nvls")
    topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=90, ring=ring, tree=ring, nvls=nvls)
    cell = {(c.algorithm, c.protocol): c for c in cost_table("all-reduce", topo, old)}[("nvls", "Simple")]
    assert cell.algbw_GBps == pytest.approx(8 * 40 * 5 / 6)  # legacy min(bwIntra, bwInter), 5/6 ratio


def test_user_override_file(tmp_path):
    path = tmp_path / "tuner.toml"
    path.write_text('version = "2.27.5"\n[base_latency_us]\nring = { ll = 2.0 }\n')
    t = load_tables(path)
    assert t.version == "2.27.5" and t.base_latency_us("ring", "LL") == 2.0
    assert t.base_latency_us("ring", "Simple") == 8.4


@pytest.mark.parametrize(("text", "field"), [
    ("[base_latency_us]\nrng = { ll = 1.0 }\n", "base_latency_us.rng"),
    ("[base_latency_us]\nring = { ll = \"fast\" }\n", "base_latency_us.ring.ll"),
    ("[tree_correction_factor]\nll = [1.0, 0.5]\n", "tree_correction_factor.ll"),
    ("[nccl_tests]\nlaunch_overhead_us = -1.0\n", "nccl_tests.launch_overhead_us"),
    ("[refinements]\nnvls_legacy_bandwidth = 1\n", "refinements.nvls_legacy_bandwidth"),
])
def test_bad_override_names_the_field(tmp_path, text, field):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ProfileError, match=field.replace(".", r"\.")):
        load_tables(path)


def test_unknown_version_and_bad_toml(tmp_path):
    with pytest.raises(UnknownNameError, match="version"):
        load_tables(version="1.0.0")
    path = tmp_path / "broken.toml"
    path.write_text("[base_latency_us\n")
    with pytest.raises(ProfileError, match="tuning"):
        load_tables(path)


def test_a_version_given_twice_must_agree(tmp_path):
    """--nccl-version 2.27.5 over a tuning file setting 2.21.5 ran as 2.27.5 with no word (review,
    2026-11-29); the same version twice, or either alone, is fine."""
    from dpbase.errors import InputError

    path = tmp_path / "v.toml"
    path.write_text('version = "2.21.5"\n')
    with pytest.raises(InputError, match=r"^nccl_version: got '2.27.5'; allowed: the version the tuning file .* sets "
                                         r"\(2.21.5\), or leave one of them out$"):
        load_tables(path, version="2.27.5")
    assert load_tables(path, version="2.21.5").version == load_tables(path).version == "2.21.5"


def test_public_api_is_complete_and_sorted():
    import costmodel.nccl as nccl

    assert nccl.__all__ == sorted(nccl.__all__)
    public = {name for name in vars(nccl) if not name.startswith("_") and name not in {
        "model", "names", "tables", "topology", "tuning", "latency", "selection", "search", "hostmem", "rccl", "terms"}}
    assert public == set(nccl.__all__)
