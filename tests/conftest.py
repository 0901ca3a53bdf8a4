"""Test-wide settings.

Hypothesis runs derandomized by default, so CI and a fresh clone see the same examples every
time (a property failure is then a real regression, not a new random draw). To explore new
examples: ``python -m pytest --hypothesis-profile=explore``.
"""

from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500, print_blob=True)
settings.load_profile("default")
