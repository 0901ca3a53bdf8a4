"""The generated formula reference matches the registry."""

from pathlib import Path

from tools.docgen.pages import render


def test_formula_reference_is_current():
    committed = Path(__file__).resolve().parents[2] / "docs" / "formulas.md"
    assert committed.read_text(encoding="utf-8") == render(), "run: python -m tools.docgen.pages docs/formulas.md"


def test_tutorial_commands_print_what_the_tutorial_shows():
    from tools.docgen.tutorial import render as tutorial

    committed = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
    assert committed.read_text(encoding="utf-8") == tutorial(), "run: python -m tools.docgen.tutorial docs/tutorial.md"


def test_readme_examples_print_what_the_readme_shows():
    from tools.docgen.readme import render, section_of

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert section_of(readme) == render(), "run: python -m tools.docgen.readme README.md"


def test_api_notebook_outputs_are_what_the_api_returns():
    from tools.docgen.notebook import render

    committed = Path(__file__).resolve().parents[2] / "docs" / "api-example.ipynb"
    assert committed.read_text(encoding="utf-8") == render(), "run: python -m tools.docgen.notebook docs/api-example.ipynb"


def test_api_guide_examples_run():
    import doctest

    guide = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    text = "\n".join("" if line.startswith("```") else line for line in guide.splitlines())  # fences end outputs
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/api.md", "docs/api.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 10 and result.failed == 0
