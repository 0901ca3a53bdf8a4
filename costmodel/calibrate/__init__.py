"""Calibration: nccl-tests logs → parsed rows → piecewise α-β fits → link/cluster profiles.

    parse        read nccl-tests text/JSON logs (every layout since 2018)
    conventions  nccl-tests' per-collective conventions (busbw factor, size meaning)
    fit          robust piecewise fit, regimes, cross-validation
    link         a fitted log → a calibrated link profile (TOML)
"""

from dpbase.lazy import lazy_exports

_EXPORTS = {
    "parse_file": "costmodel.calibrate.parse",
    "parse_text": "costmodel.calibrate.parse",
    "fit_times": "costmodel.calibrate.fit",
    "cross_validate": "costmodel.calibrate.fit",
    "calibrate": "costmodel.calibrate.link",
    "profile_toml": "costmodel.calibrate.link",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
