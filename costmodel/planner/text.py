"""The planner's plain-language reason, built from its findings (numbers formatted once)."""

from __future__ import annotations

from dpbase.units import format_size, format_time


def rate(samples_per_s: float) -> str:
    """Samples per second as the table and the reason print them."""
    return f"{samples_per_s:,.1f}"


def percent(fraction: float) -> str:
    """A fraction as a percentage with one decimal."""
    return f"{fraction:.1%}"


def describe(row) -> str:
    """One plan in words: algorithm, GPUs, batch split, bucket, dtype, ZeRO stage."""
    where = f"{row.gpus} GPUs ({row.nodes} x {row.gpus_per_node})" if row.nodes > 1 else \
        f"{row.gpus} GPU{'s' if row.gpus > 1 else ''} in one node"
    return (f"{row.algorithm} on {where}, micro-batch {row.micro_batch} x {row.accumulation_steps} "
            f"accumulation steps, {format_size(row.bucket_bytes)} buckets, {row.grad_dtype} "
            f"gradients, ZeRO-{row.zero_stage}"
            f"{', activation recomputation' if row.recompute else ''}")


def _headline(best, objective: str) -> str:
    extra = ""
    if objective == "time-to-train":
        extra = f", {best.objective_value:,.1f} hours to train"
    elif objective == "gpu-hours":
        extra = f", {best.objective_value:,.0f} GPU-hours to train"
    return (f"Recommended: {describe(best)}. Step {format_time(best.total_s)}, "
            f"{rate(best.samples_per_s)} samples/s{extra}, scaling efficiency "
            f"{percent(best.scaling_efficiency)}, exposed communication "
            f"{percent(best.comm_share)} of the step.")


def _tie(findings) -> str:
    tie = findings.get("tie_break")
    if not tie:
        return ""
    return (f" Plans within {percent(tie['tolerance'])} of the fastest (step "
            f"{format_time(tie['fastest_step_s'])}) count as equal; this one uses the fewest GPUs, "
            "then the least communication, among them.")


def _bound(best, findings) -> str:
    shares = findings["shares"]
    parts = ", ".join(f"{name} {percent(share)}" for name, share in shares.items())
    return f"Bound by {findings['bound']}: {parts} of the step."


def _memory(best, findings) -> str:
    used, capacity = best.memory_bytes, best.memory_bytes + best.memory_headroom_bytes
    text = (f"Memory: {used / 1e9:.1f} GB of {capacity / 1e9:.1f} GB per GPU "
            f"({best.memory_headroom_bytes / 1e9:.1f} GB headroom)")
    nxt = findings["next_micro_batch"]
    if nxt:
        verdict = "fits" if nxt["fits"] else "does not fit"
        text += (f"; micro-batch {nxt['micro_batch']} would need {nxt['memory_bytes'] / 1e9:.1f} GB "
                 f"and {verdict}")
    if best.zero_stage:
        text += f"; plain data parallelism does not fit, hence ZeRO-{best.zero_stage}"
    return text + "."


def _recompute(best, findings) -> str:
    """Why activation recomputation is on (empty when it is off)."""
    state = findings.get("recompute") or {}
    if not best.recompute:
        return ""
    without = state.get("leanest_without_bytes")
    why = "requested" if state.get("requested") else (
        f"no plan fits without it: the leanest needs {without / 1e9:.1f} GB per GPU"
        if without is not None else "no plan fits without it")
    return (f"Activation recomputation on ({why}): only each layer's input is kept, and each "
            "layer's forward runs again in backward (4/3 of the compute).")


def _runner_up(best, findings) -> str:
    second, cross = findings["runner_up"], findings["crossover"]
    if not second:
        return "No communication: one GPU." if best.gpus == 1 else "No other algorithm is feasible."
    where = f"rank {second['rank']}" if second["rank"] else "below the table"
    text = (f"Runner-up algorithm: {second['algorithm']} ({where}, step time "
            f"{second['step_time_change']:+.1%}).")
    if cross and cross["size_bytes"]:
        side = "above" if cross["runner_up_wins_above"] else "below"
        text += (f" Its {cross['primitive']} beats {best.algorithm} {side} "
                 f"{format_size(cross['size_bytes'])} per call on {cross['gpus']} GPUs "
                 f"(this plan's buckets are {format_size(best.bucket_bytes)}).")
    elif cross:
        text += (f" Its {cross['primitive']} is never faster than {best.algorithm} between 1 KiB "
                 f"and 64 GiB on {cross['gpus']} GPUs.")
    return text


def _what_if(findings) -> str:
    sentences = []
    for change in findings["what_if"]:
        effect = f"{change['throughput_change']:+.1%} throughput"
        if change["changes"]:
            diffs = ", ".join(f"{name} {new} instead of {old}" for name, new, old in change["changes"])
            sentences.append(f"With {change['label']}: {diffs} ({effect}).")
        else:
            sentences.append(f"With {change['label']} the choice stays the same ({effect}).")
    return " ".join(sentences)


def _gpus(best, findings, objective: str) -> str:
    most, allowed = findings["max_gpus_considered"], findings["max_gpus_allowed"]
    text = ""
    if most < allowed:
        text += (f" The global batch is divisible by no GPU count between {most} and {allowed}"
                 f" (within a node or whole nodes), so at most {most} GPUs can be used.")
    if best.gpus < most:
        text += f" More GPUs (up to {most}) score worse on {objective}."
    return text


def reason_text(best, findings: dict, objective: str) -> str:
    """The reason as a few sentences, one line each."""
    lines = [_headline(best, objective) + _gpus(best, findings, objective) + _tie(findings), _bound(best, findings),
             _memory(best, findings), _recompute(best, findings), _runner_up(best, findings),
             _what_if(findings)]
    return "\n".join(line for line in lines if line)
