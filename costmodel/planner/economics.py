"""Price per GPU-hour and board power per GPU (``hardware/data/prices.toml``), with sources.

Kept apart from the GPU profiles: prices change and are the user's to override. A GPU
without a sourced price or power returns None for it.

    >>> economics_for("h100-sxm").power_w
    700.0
"""

from __future__ import annotations

import functools
import os

from dpbase.bundled import load_bundled
from dpbase.errors import InputError
from dpbase.values import frozen
from hardware.loader import DATA_DIR

PRICES_FILE = os.path.join(DATA_DIR, "prices.toml")


@frozen(kw_only=True)
class Economics:
    """USD per GPU-hour and watts per GPU (None where unknown), and where they come from."""

    gpu: str
    price_per_gpu_hour: float | None = None
    power_w: float | None = None
    source: str = ""


@functools.cache
def _table() -> dict[str, Economics]:

    rows = load_bundled(PRICES_FILE).get("price", [])
    out = {}
    for row in rows:
        price, power = row.get("price_per_gpu_hour"), row.get("power_w")
        out[row["name"]] = Economics(gpu=row["name"], source=row.get("source", ""),
                                     price_per_gpu_hour=None if price is None else float(price),
                                     power_w=None if power is None else float(power))
    return out


# The most a price per GPU-hour (USD) and a board power per GPU (W) may be: far above any real
# GPU's, low enough that a plan's cost and energy stay printable numbers.
MAX_PRICE_PER_GPU_HOUR = 1e6
MAX_POWER_W = 1e6


def check_economics(price_per_gpu_hour: float | None = None, power_w: float | None = None) -> None:
    """``--price-per-gpu-hour`` and ``--power-per-gpu``: None (the bundled figure) or a finite
    number > 0 up to :data:`MAX_PRICE_PER_GPU_HOUR` USD / :data:`MAX_POWER_W` W."""
    for field, value, most, unit in (("price_per_gpu_hour", price_per_gpu_hour, MAX_PRICE_PER_GPU_HOUR,
                                      "USD per GPU-hour"),
                                     ("power_per_gpu", power_w, MAX_POWER_W, "W per GPU")):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
            raise InputError(field, value, f"a finite number > 0 and at most {most:,.0f} {unit}")


def economics_for(gpu_name: str, *, price_per_gpu_hour: float | None = None,
                  power_w: float | None = None) -> Economics:
    """The bundled figures for ``gpu_name``, with the user's overrides applied (checked: the one
    place the API's and the CLI's overrides pass)."""
    check_economics(price_per_gpu_hour, power_w)
    base = _table().get(gpu_name, Economics(gpu=gpu_name))
    source = base.source
    if price_per_gpu_hour is not None:
        source = "price given by the user; " + source
    if power_w is not None:
        source = "power given by the user; " + source
    return Economics(gpu=gpu_name, source=source,
                     price_per_gpu_hour=base.price_per_gpu_hour if price_per_gpu_hour is None
                     else float(price_per_gpu_hour),
                     power_w=base.power_w if power_w is None else float(power_w))
