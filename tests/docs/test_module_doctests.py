"""Every example in a module's docstrings runs and prints what it says (a stale one read 80 GB for
an H100's 81,090 MiB, and two could not run: they were never executed). One test per module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dpbase", "hardware", "costmodel")


def _modules() -> list[str]:
    found = []
    for package in PACKAGES:
        found.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            found.append(info.name)
    return sorted(found)


@pytest.mark.parametrize("name", _modules())
def test_the_modules_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, module=module):
        runner.run(test, clear_globs=True)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
