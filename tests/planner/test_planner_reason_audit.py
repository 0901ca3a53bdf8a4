"""Reason sentences a planner audit found false or misleading (2026-11-30); every table row and
number behind them already agreed with `iteration`."""

from __future__ import annotations

from costmodel.planner.recommend import plan

README = dict(nodes=4, global_batch=512, seq_len=4096)


def _line(result, start):
    return next(line for line in result.reason.splitlines() if line.startswith(start))


def test_no_runner_up_says_why_nccls_named_algorithms_are_out_of_a_zero_plan():
    """"No other algorithm is feasible." read as ring and tree failing on the README's plan; they
    name NCCL's all-reduce, which its ZeRO-1 step does not issue."""
    result = plan("llama2-7b", "dgx-h100", **README)
    assert result.best.zero_stage == 1 and result.findings["runner_up"] is None
    assert _line(result, "No other algorithm") == (
        "No other algorithm has a feasible plan: under NCCL's model ring, double-binary-tree and in-network are swept "
        "for ZeRO-0's all-reduce alone, and a ZeRO-1 step issues reduce-scatters and all-gathers (at NCCL's own "
        "choice) instead.")
    textbook = plan("llama2-7b", "dgx-h100", algorithms=["auto", "two-shot"], **README)  # not NCCL's: said alike
    assert "under NCCL's model two-shot is swept for ZeRO-0's all-reduce alone" in textbook.reason
    only = plan("llama2-7b", "dgx-h100", algorithms=["auto"], **README)
    assert _line(only, "No other algorithm") == "No other algorithm was swept."


def test_the_tie_band_is_measured_from_the_best_on_the_objective():
    """Under gpu-hours the band's leader (a 16-GPU plan at 15.38 s) was called "the fastest"
    beside a 7.791 s table row."""
    result = plan("llama2-13b", "dgx-h100", nodes=4, global_batch=256, seq_len=4096, objective="gpu-hours", tokens=10e9)
    assert "tie band of the best on gpu-hours (step" in result.reason and "of the fastest" not in result.reason
    tied = plan("2.7B", "dgx-h100", nodes=2, global_batch=128).reason  # docs/planner.md's tie-break example
    assert "tie band of the fastest (step" in tied or "tied with the fastest (step" in tied


def test_recomputation_says_what_the_memory_it_frees_runs():
    """Both bests ran micro-batch 1 on two L40S nodes: the gain was ZeRO-1 against ZeRO-2, where the
    reason said larger micro-batches."""
    stage = plan("llama2-7b", "l40s-4x-pcie", nodes=2, global_batch=64, seq_len=2048)
    without = stage.findings["recompute"]["without"]
    assert stage.best.recompute and (stage.best.micro_batch, without["micro_batch"]) == (1, 1)
    assert f"the memory it frees runs ZeRO-{stage.best.zero_stage} (without it ZeRO-{without['zero_stage']}" in stage.reason
    assert without["zero_stage"] > stage.best.zero_stage and "micro-batch 1 (without" not in stage.reason
    micro = plan("mpt-30b", "h100-pcie-2x-nvlink-bridge", nodes=8, global_batch=64)
    assert micro.best.recompute and "the memory it frees runs micro-batch 4 (without it 1)" in micro.reason


def test_a_larger_micro_batch_that_fits_at_a_higher_zero_stage_says_so():
    """"micro-batch 2 would need 32.9 GB and does not fit" beside a ZeRO-1 row running it at 18.5 GB."""
    result = plan("gpt3-1.3b", "dgx-1", global_batch=64)
    nxt = result.findings["next_micro_batch"]
    assert result.best.zero_stage == 0 and not nxt["fits"] and nxt["fits_at_zero"]["zero_stage"] == 1
    gb = nxt["fits_at_zero"]["memory_bytes"] / 1e9
    assert (f"micro-batch 2 would need {nxt['memory_bytes'] / 1e9:.1f} GB and does not fit within the reserve at ZeRO-0 "
            f"(at ZeRO-1 it needs {gb:.1f} GB and fits)") in result.reason
    assert any(row.micro_batch == 2 and row.zero_stage == 1 and abs(row.memory_bytes / 1e9 - gb) < 0.05
               for row in result.candidates)


def test_the_iteration_header_names_the_collective_the_step_runs():
    """A ZeRO-1 step's header named NCCL's all-reduce choice (nvls_tree) where the step runs only
    reduce-scatters and all-gathers."""
    import json

    from typer.testing import CliRunner

    from cli import app

    args = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "1",
            "--seq-len", "4096", "--accum", "4"]
    zero1 = CliRunner().invoke(app, [*args, "--zero", "1"])
    assert zero1.exit_code == 0 and "for 25 MiB reduce-scatters, nccl backend)" in zero1.output.splitlines()[0]
    assert "nvls_tree" not in zero1.output.splitlines()[0]
    data = json.loads(CliRunner().invoke(app, [*args, "--zero", "1", "--json"]).output)["comm"]
    assert data["primitive_at_25MiB"] == "reduce-scatter" and data["algorithm_at_25MiB"] == "ring"
    plain = CliRunner().invoke(app, [*args, "--zero", "0"])  # does not fit, but the header stands
    assert "at 25 MiB, nccl backend)" in plain.output.splitlines()[0]


def test_a_named_textbook_algorithm_under_nccl_says_it_is_timed_off_nccls_model():
    """`--zero 1 --algorithm pairwise` under the nccl backend printed "pairwise (nccl backend)" and
    carried the textbook model's band (280 ms-1.35 s) into the step's comm interval."""
    import json

    from typer.testing import CliRunner

    from cli import app

    args = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "2",
            "--accum", "8", "--zero", "1", "--bucket", "400MiB", "--seq-len", "4096"]
    named = CliRunner().invoke(app, [*args, "--algorithm", "pairwise"])
    assert named.exit_code == 0 and "algorithm pairwise (ideal backend)" in named.output.splitlines()[0]
    data = json.loads(CliRunner().invoke(app, [*args, "--algorithm", "pairwise", "--json"]).output)
    low, high = data["comm_interval_s"]
    assert high < 1.2 * data["comm_s"]  # the all-gathers' NCCL spread alone, not the textbook 1-5x


def test_the_header_of_hybrid_sharding_probes_the_node_its_reduce_scatters_run_on():
    import json

    from typer.testing import CliRunner

    from cli import app

    args = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "16", "--micro-batch", "1",
            "--seq-len", "4096", "--zero", "3", "--shard", "hybrid"]
    first = CliRunner().invoke(app, args).output.splitlines()[0]
    assert "ring/Simple for 25 MiB reduce-scatters in the node, nccl backend" in first  # the 8-GPU group's choice
    comm = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)["comm"]
    assert comm["group_at_25MiB"] == "node" and comm["ranks"] == 128
