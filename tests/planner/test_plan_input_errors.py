"""``dpcost plan`` input errors and small numbers through the CLI (``from cli import app``).

A forced NCCL algorithm still plans ZeRO (its reduce-scatter/all-gather are NCCL's own choice, as
``iteration`` runs them); an algorithm that cannot run any plan that fits is named as the
algorithms' error, not the model's; the price and power per GPU are finite and bounded; ``--emit``
and ``--json`` are refused together; a nonzero throughput or share never prints as zero.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.planner import rank, recommend
from costmodel.planner.comm import zero_algorithm_ok
from costmodel.planner.text import number, percent, rate
from dpbase.errors import InputError

runner = CliRunner()
LLAMA = ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--global-batch", "512"]


def _one_error_line(result, *parts: str) -> str:
    """Exit 2, no traceback, one line on stderr holding every part."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


# --- 1. forced algorithms and ZeRO ------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["ring", "tree", "double-binary-tree", "nvls"])
def test_a_forced_nccl_algorithm_where_only_zero_fits_names_the_algorithms(algorithm):
    """llama2-7b on one DGX H100 fits only with ZeRO, whose reduce-scatter and all-gather the model
    times as NCCL's own choice: a forced algorithm forces the all-reduce only (its ZeRO rows
    would be auto's under another name, and NCCL_ALGO would force the other collectives onto an
    algorithm they were not timed with). Refused naming --algorithms and why: it used to blame
    the model with "the leanest needs 20.6 GB of 85 GB", a plan that fits."""
    result = runner.invoke(app, [*LLAMA, "--algorithms", algorithm])
    line = _one_error_line(result, "algorithms: got ", "auto, which ZeRO >= 1 needs under the nccl backend",
                           "plain data parallelism", "needs", "--algorithms auto,")
    assert "model:" not in line and "the leanest (ZeRO-3" not in line
    ok = runner.invoke(app, [*LLAMA, "--algorithms", f"auto,{algorithm}", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["best"]["algorithm"] == "auto"


def test_zero_under_nccl_keeps_auto_only():
    for name in ("ring", "double-binary-tree", "in-network"):
        assert zero_algorithm_ok(name, 0, "nccl") and not zero_algorithm_ok(name, 1, "nccl")
    assert zero_algorithm_ok("auto", 3, "nccl")
    assert not zero_algorithm_ok("parameter-server", 1, "nccl")
    assert zero_algorithm_ok("ring", 1, "ideal") and not zero_algorithm_ok("binomial", 1, "ideal")


@pytest.mark.parametrize("args", [["--backend", "ideal", "--algorithms", "binomial"],
                                  ["--algorithms", "parameter-server"]])
def test_algorithm_without_sharding_names_the_algorithms(args):
    """ZeRO needs reduce-scatter/all-gather these algorithms lack; plain DP does not fit: the
    error is the algorithms', and says so (not 'the leanest needs 20.6 GB of 85 GB')."""
    result = runner.invoke(app, [*LLAMA, *args])
    name = args[-1]
    line = _one_error_line(result, f"algorithms: got '{name}'", "reduce-scatter and all-gather",
                           "plain data parallelism", "--algorithms auto,")
    assert "model:" not in line and "the leanest (ZeRO-3" not in line


# --- 2. price and power per GPU ---------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e300", "1000001"])
def test_price_per_gpu_hour_out_of_range(value):
    result = runner.invoke(app, [*LLAMA, "--objective", "cost", "--tokens", "2T", "--price-per-gpu-hour", value])
    line = _one_error_line(result, "price_per_gpu_hour: got", "a finite number > 0", "1,000,000 USD per GPU-hour")
    assert "budget" not in line


@pytest.mark.parametrize("value", ["inf", "nan", "0", "1e30"])
def test_power_per_gpu_out_of_range(value):
    result = runner.invoke(app, [*LLAMA, "--objective", "energy", "--tokens", "2T", "--power-per-gpu", value])
    _one_error_line(result, "power_per_gpu: got", "a finite number > 0", "1,000,000 W per GPU")


def test_tiny_price_prints_a_nonzero_cost():
    result = runner.invoke(app, [*LLAMA, "--objective", "cost", "--tokens", "2T", "--price-per-gpu-hour", "1e-30"])
    assert result.exit_code == 0, result.output
    assert " 0 USD" not in result.stdout
    assert "e-26 USD" in result.stdout


def test_largest_price_and_power_print_short_numbers():
    result = runner.invoke(app, [*LLAMA, "--objective", "cost", "--tokens", "2T", "--price-per-gpu-hour", "1e6",
                                 "--power-per-gpu", "1e6"])
    assert result.exit_code == 0, result.output
    longest = max(len(word) for word in result.stdout.split())
    assert longest < 40


def test_api_refuses_infinite_price():
    with pytest.raises(InputError, match="price_per_gpu_hour"):
        recommend.plan("gpt2", "dgx-h100", global_batch=64, objective="cost", tokens=1e9,
                       price_per_gpu_hour=float("inf"))


def test_unscored_plans_never_give_an_empty_reason():
    """No deadline or budget, yet no finite score: the error names the objective's input."""
    for objective, field in (("cost", "price_per_gpu_hour"), ("energy", "power_per_gpu"),
                             ("time-to-train", "tokens")):
        error = recommend._unscored_error(objective, rank.Constraints(tokens=2e12, price_per_gpu_hour=2.0,
                                                                       power_w=700.0))
        assert error.field == field and error.allowed.strip() and ": ;" not in str(error)


def test_a_plan_with_the_slowest_loader_allowed_finishes_in_finite_time():
    """Through the CLI, every plan held up by its data loader: a loader at 1e-300 samples/s once
    made every plan's time-to-train infinite (then refused naming the tokens); since the loader's
    rate has a floor (one sample in 1,000 s, tests/commands/test_cli_audit_s29.py) the slowest one
    allowed gives a finite answer, with no numpy overflow warning beside it."""
    import warnings

    with warnings.catch_warnings():  # pytest would otherwise swallow the warning the CLI printed
        warnings.simplefilter("error", RuntimeWarning)
        result = runner.invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64",
                                     "--objective", "time-to-train", "--tokens", "1e15", "--input-rate", "0.001"])
    assert result.exit_code == 0, result.output
    recommended = next(line for line in result.stdout.splitlines() if line.startswith("Recommended:"))
    assert "Step 8000 s" in recommended and "to train: 33,908,420,139 hours" in recommended
    assert "RuntimeWarning" not in result.stderr and "inf" not in recommended


# --- 3. --emit with --json --------------------------------------------------------------------


@pytest.mark.parametrize("emit", ["env", "torch", "deepspeed"])
def test_emit_with_json_is_refused(emit):
    result = runner.invoke(app, [*LLAMA, "--emit", emit, "--json"])
    assert result.exit_code == 2, result.output
    assert f"--json: got 'given with --emit {emit}'" in result.stderr
    assert "one output: --emit writes a launch script, --json the plan" in result.stderr
    assert "torchrun" not in result.stdout and "NCCL_ALGO" not in result.stdout
    assert json.loads(result.stdout)["error"]["field"] == "--json"  # --json's error object


# --- 4. small numbers -------------------------------------------------------------------------


def test_helpers_keep_normal_values_and_never_print_zero():
    assert rate(2391.84) == "2,391.8" and rate(73.5) == "73.5" and rate(0.0) == "0.0"
    assert rate(0.0077) == "0.0077" and rate(8e-9) == "8e-09"
    assert percent(0.943) == "94.3%" and percent(1.0) == "100.0%" and percent(0.0) == "0.0%"
    assert percent(1.7e-8) == "1.7e-06%" and percent(0.0003) == "0.03%"
    assert number(57147.2, 0) == "57,147" and number(5.7e-26, 0) == "5.7e-26"
    for value in (1e-300, 3e-12, 4.9e-4, 0.049):
        assert float(rate(value).replace(",", "")) != 0
        assert float(percent(value).rstrip("%")) != 0
    assert rate(float("inf")) == "inf" and percent(float("nan")) == "nan%"


def test_plan_with_a_slow_input_pipeline_prints_nonzero_rates():
    result = runner.invoke(app, [*LLAMA, "--input-rate", "0.001"])  # the slowest loader allowed
    assert result.exit_code == 0, result.output
    recommended = next(line for line in result.stdout.splitlines() if line.startswith("Recommended:"))
    assert "0.0 samples/s" not in recommended and "efficiency 0.0%" not in recommended
    assert "0.008 samples/s" in recommended
    assert np.isfinite(float(recommended.split(" samples/s")[0].rsplit(" ", 1)[1]))
