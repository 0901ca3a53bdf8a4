"""Typer sub-applications of the ``dpcost`` CLI, one module per command group.

Commands are thin: they parse options, call library functions and print. Library code
raises :class:`dpbase.errors.DpcostError`; :func:`costmodel.commands.common.cli_errors`
turns it into one line on stderr and exit code 2.
"""
