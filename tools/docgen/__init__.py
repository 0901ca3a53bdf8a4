"""Documentation generators: README examples, tutorial, formulas page, API notebook (run with python -m)."""
