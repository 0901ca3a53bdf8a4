"""The ``dpcost`` commands, one module per command or group of subcommands (``hardware``, ``plot``).

Each command is a function whose parameters are declared with :mod:`costmodel.commands.options`;
``cli`` builds the typer app from them and answers well-formed command lines without typer
(:mod:`costmodel.commands.argv`). Commands are thin: they parse options, call library functions
and print. Library code
raises :class:`dpbase.errors.DpcostError`; :func:`costmodel.commands.common.cli_errors`
turns it into one line on stderr and exit code 2.
"""
