"""The ``--rate`` options of ``iteration`` and ``plan``, declared once; what they do is in
:mod:`costmodel.commands.rate_run`, imported only when ``--rate`` is given (a plain answer pays
nothing for them).
"""

from typing import Annotated

from costmodel.commands.options import Option
from dpbase.errors import InputError

RATE = Annotated[str | None, Option("--rate", help="Compute speed from a run you measured: its throughput, whole run (1200, 1200 img/s, 69070 tok/s); the MFU that makes the model's step on that run take it replaces the default MFU (calibrated: the micro-batch terms still apply).")]
RATE_GPUS = Annotated[int | None, Option("--rate-gpus", help="GPUs of the --rate run, on this cluster (default 1).")]
RATE_ACCUM = Annotated[int | None, Option("--rate-accum", help="Micro-batches per step of the --rate run (default 1).")]
RATE_ZERO = Annotated[int | None, Option("--rate-zero", help="ZeRO stage of the --rate run (default 0).")]
RATE_RECOMPUTE = Annotated[bool, Option("--rate-recompute", help="The --rate run recomputed activations.")]

def check_options(rate: str | None, mfu: float | None, elementwise_traffic: float | None = None,
                  **described) -> None:
    """--rate excludes --mfu and --elementwise-traffic (before its solve; TrainingConfig refuses the
    traffic beside --mfu); the --rate-* options (``described``: their values by field name, e.g.
    ``rate_gpus``) describe its run, so need it."""
    if rate is not None and mfu is not None:
        raise InputError("rate", rate, "either --rate or --mfu, not both")
    if rate is not None and elementwise_traffic is not None:
        from costmodel.training.roofline import BESIDE_A_GIVEN_SPEED

        raise InputError("elementwise-traffic", elementwise_traffic, BESIDE_A_GIVEN_SPEED)
    for field, value in described.items():
        if rate is None and value is not None and value is not False:  # 0 is given, False is the flag's absence
            raise InputError(field, value, "only with --rate (the run it describes)")
