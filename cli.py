"""dpcost: the command line (a typer app over costmodel and hardware).

Every command prints JSON with ``--json``; bad input gives one ``error: …`` line on stderr and
exit code 2.

The commands declare their parameters once (:mod:`costmodel.commands.options`); typer builds
the app from them (help, completion, usage errors). A command line whose arguments are all
well-formed is answered without importing typer or click (:func:`answer_plainly`): the same
function, called with the values click would give it (:mod:`costmodel.commands.argv`).
"""

from __future__ import annotations

import os
import sys

# numpy's OpenBLAS starts one thread per core when it loads, which costs more CPU than anything a
# dpcost answer asks of it (elementwise sweeps and tiny least-squares fits; no large matrix
# products). One thread, unless the user chose otherwise (benchmarks/speed_ratios.py measures it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Each command's module is imported only when that command runs (or --help lists them all): a
# scalar `dpcost collective` does not pay for the planner's, calibration's or plotting's imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "formula": ("costmodel.commands.collective_cmd", "formula"),
    "collective": ("costmodel.commands.collective_cmd", "collective"),
    "compare": ("costmodel.commands.collective_cmd", "compare"),
    "sweep": ("costmodel.commands.sweep_cmd", "sweep"),
    "iteration": ("costmodel.commands.iteration_cmd", "iteration"),
    "plan": ("costmodel.commands.plan_cmd", "plan"),
    "calibrate": ("costmodel.commands.calibrate_cmd", "calibrate"),
    "nccl-table": ("costmodel.commands.nccl_cmd", "nccl_table"),
    "hardware": ("costmodel.commands.hardware_cmd", "SUBCOMMANDS"),  # groups: NAME → command
    "plot": ("costmodel.commands.plot_cmd", "SUBCOMMANDS"),
}
# Each command's first help paragraph, so `dpcost --help` lists them without importing every
# command module (tests/commands/test_cli_help.py checks they equal the commands' own help).
SUMMARIES: dict[str, str] = {
    "formula": "Show the symbolic α-β-γ formula(s), conditions, lower bound and source.",
    "collective": "Predict one collective: time, its α/β/γ parts, steps and traffic.",
    "compare": "Rank every applicable algorithm, fastest first, with the lower bound; the winner is marked *.",
    "sweep": "Predict every combination of the axes; one row each the model answers (every Prediction field in csv/json; the others are left out with a note).",
    "iteration": "Break one training step down: compute, hidden/exposed communication, optimizer, memory.",
    "plan": "Recommend algorithm, micro-batch, accumulation, GPUs, bucket, gradient dtype and ZeRO stage.",
    "calibrate": "Fit latency and bandwidth (per size regime) to nccl-tests logs.",
    "nccl-table": "Show NCCL's tuning table for a cluster (RCCL's on AMD), as NCCL_DEBUG=TUNING prints it.",
    "hardware": "Hardware profiles: GPUs, links and systems (bundled or user TOML).",
    "plot": "Interactive charts (plotly, offline HTML).",
}


def _command_target(name: str):
    """``(defining module, target)`` of a command: a function, or a group's ``{name: function}``."""
    import importlib

    module, attribute = COMMANDS[name]
    defining = importlib.import_module(module)
    return defining, getattr(defining, attribute)


def _command_list_file() -> str:
    """This file: what the top-level help is made from (helpcache keys on it)."""
    return os.path.realpath(__file__)


def _build_app():
    """The typer app (imports typer and click)."""
    import typer
    import typer.core

    # Help is click's plain text: typer's rich help loads rich.markdown and markdown-it (about half
    # of `dpcost --help`'s start-up) for formatting dpcost does not use. typer-slim (pinned <0.20)
    # reads this flag at call time; dpcost's own tables still use rich on a terminal.
    typer.core.HAS_RICH = False

    class LazyCommands(typer.core.TyperGroup):
        """The top-level group: commands built from their module on first use."""

        def list_commands(self, ctx) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx, name: str):
            if name not in self.commands and name in COMMANDS:
                import typer.main
                import typer.models

                from costmodel.commands.options import for_typer

                defining, target = _command_target(name)
                if isinstance(target, dict):  # a group of subcommands
                    group = typer.Typer(help=defining.HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)
                    for subcommand, function in target.items():
                        group.command(subcommand)(for_typer(function))
                    command = typer.main.get_command(group)
                    command.name = name
                else:
                    command = typer.main.get_command_from_info(
                        typer.models.CommandInfo(name=name, callback=for_typer(target)),
                        pretty_exceptions_short=True, rich_markup_mode=None)
                self.commands[name] = command
            return self.commands.get(name)

        def get_help(self, ctx) -> str:
            """click's help text (``--help``, a bare ``dpcost``); the top level's is kept, as click
            echoes it, for the next ``dpcost --help`` without typer (helpcache)."""
            text = super().get_help(ctx)
            if ctx.parent is None:
                from costmodel.commands.helpcache import keep_help

                keep_help(text + "\n", _command_list_file())
            return text

        def format_commands(self, ctx, formatter) -> None:
            """click's command list, from :data:`SUMMARIES` (no command module is imported)."""
            from click.utils import make_default_short_help

            limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
            with formatter.section("Commands"):
                formatter.write_dl([(name, make_default_short_help(SUMMARIES[name], limit)) for name in COMMANDS])

        def resolve_command(self, ctx, args):
            name = args[0] if args else None
            if name and not name.startswith("-") and name not in COMMANDS:
                import difflib

                close = difflib.get_close_matches(name, list(COMMANDS), n=1)
                ctx.fail(f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""))
            if name in COMMANDS:  # a list option given twice, which click would take the last of
                command, rest = _command_target(name)[1], args[1:]
                if isinstance(command, dict):
                    command, rest = (command.get(args[1]), args[2:]) if len(args) > 1 else (None, [])
                if command is not None and _refuse_repeated(command, rest, args) is not None:
                    raise SystemExit(2)
            return super().resolve_command(ctx, args)

    app = typer.Typer(
        name="dpcost",
        help="Cost model and planner for data-parallel training communication.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=True,
        rich_markup_mode=None,
        cls=LazyCommands,
    )

    def _version(value: bool) -> None:
        if value:
            from importlib.metadata import PackageNotFoundError, version

            try:
                typer.echo(f"dpcost {version('dpcost')}")
            except PackageNotFoundError:
                typer.echo("dpcost (not installed)")
            raise typer.Exit()

    @app.callback()
    def main_options(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    ) -> None:
        """Cost model and planner for data-parallel training communication."""

    return app


def _app():
    """The typer app, built once (importing typer and click)."""
    if "app" not in globals():
        globals()["app"] = _build_app()
    return globals()["app"]


def __getattr__(name: str):
    """``cli.app``, built on first use (``from cli import app`` in tests and tools)."""
    if name == "app":
        return _app()
    raise AttributeError(f"module 'cli' has no attribute {name!r}")


def answer_plainly(args: list[str]) -> int | None:
    """Run a function command whose arguments :func:`costmodel.commands.argv.parse` takes, or
    print the top-level help click last printed (:mod:`costmodel.commands.helpcache`), without
    typer; None (nothing run) for anything else: a command's help, completion, a group without
    its subcommand, any usage error."""
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):  # shell completion
        return None
    if args in ([], ["--help"]):  # click's text, as it last printed it (costmodel.commands.helpcache)
        from costmodel.commands.helpcache import cached_help

        text = cached_help(_command_list_file())
        if text is None:
            return None
        sys.stdout.write(text)
        return 0
    if args[0] not in COMMANDS:
        return None
    from costmodel.commands.argv import parse

    command, rest = _command_target(args[0])[1], args[1:]
    if isinstance(command, dict):  # a group (hardware, plot): its subcommand
        command, rest = (command.get(args[1]), args[2:]) if len(args) > 1 else (None, [])
    if command is None:  # a group without a subcommand of that name
        return None
    refused = _refuse_repeated(command, rest, args)
    if refused is not None:
        return refused
    values = parse(command, rest)
    if values is None:
        return None
    return _exit_code(command(**values))


def _refuse_repeated(command, rest: list[str], args: list[str]) -> int | None:
    """Exit code 2 and one line where a list option (comma-separated values) is given twice (click
    kept the last silently), else None (:func:`costmodel.commands.argv.repeated_option`). Help and
    shell completion are click's, as they were."""
    from costmodel.commands.argv import repeated_option

    found = repeated_option(command, rest)
    if found is None or "--help" in rest or any(key.startswith("_") and key.endswith("_COMPLETE")
                                                for key in os.environ):
        return None
    from costmodel.commands.common import fail
    from dpbase.errors import InputError

    option, values = found
    error = InputError(option, values, f"once, its values as one comma-separated list (given {len(values)} times)")
    try:
        fail(str(error), error, as_json="--json" in args)
    except SystemExit as leaving:
        return int(leaving.code)
    return 2


def _answer_with_typer(args: list[str]) -> int:
    """click's run of the command line: usage errors become one ``error: …`` line and code 2."""
    import click


    try:
        code = _app()(args=args, standalone_mode=False)
    except click.exceptions.Abort:
        return 130
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as shown:  # a bare group (`dpcost hardware`): its help
        sys.stdout.write(shown.format_message() + "\n")
        return 0
    except click.exceptions.UsageError as error:
        from dpbase.text import printable, shortened

        hint = f" (see: dpcost {error.ctx.command_path.partition(' ')[2]} --help)".replace("  ", " ") if error.ctx else ""
        if "--json" in args:  # a script asked for JSON: the usage error is JSON too
            import json

            param = getattr(error, "param", None)
            field = param.opts[0] if param is not None and getattr(param, "opts", None) else None
            sys.stdout.write(json.dumps({"error": {"field": field, "got": None, "allowed": None,
                                                   "message": shortened(error.format_message())}}, indent=2) + "\n")
        sys.stderr.write(f"error: {printable(shortened(error.format_message()))}{hint}\n")
        return 2
    except click.exceptions.ClickException as error:
        from dpbase.text import printable, shortened

        sys.stderr.write(f"error: {printable(shortened(error.format_message()))}\n")
        return error.exit_code
    return _exit_code(code)


def _exit_code(returned) -> int:
    """A command's exit code: what it returned, 0 for None (click's standalone_mode=False too)."""
    return returned if isinstance(returned, int) else 0


def _reopen_closed_streams() -> None:
    """A stream closed from the start (`>&-`, `2>&-`), which Python leaves as None, becomes the
    null device: what is written to it goes nowhere, as in a shell, instead of failing."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))


def main() -> None:
    """Run one command line (``sys.argv``) and exit with its code: the entry point for callers
    in a process of their own (tests, ``python -c``); the console script is :func:`run`."""
    _reopen_closed_streams()
    try:
        code = answer_plainly(sys.argv[1:])
        if code is None:
            code = _answer_with_typer(sys.argv[1:])
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:  # output piped into `head` & co.: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:  # Ctrl-C during a plain answer: what click does (its Abort), no traceback
        sys.stderr.write("\n")
        sys.exit(130)
    except OSError as error:
        from costmodel.commands.common import OUTPUT_LOST

        if error.errno not in OUTPUT_LOST:
            raise
        # the answer could not be written (a full disk, an I/O error): one line and Python's own
        # exit status for lost output, as _leave gives when only the final flush fails
        sys.stderr.write(f"error: output lost: {error.strerror}\n")
        sys.exit(120)
    sys.exit(code)


def run() -> None:
    """The ``dpcost`` console script: :func:`main` with the cyclic garbage collector off, ended
    by :func:`_leave` (no interpreter teardown).

    A dpcost command is one short process whose objects reference counting frees (numpy arrays,
    value records); the collector's passes over every live object — numpy's and dpcost's
    imports allocate hundreds of thousands — reclaimed nothing that mattered (docs/performance.md,
    with the peak memory of the heaviest commands). Its last pass, at exit, runs even when it is
    off: :func:`_leave` skips that with the rest of the teardown. Only
    the console script does this: :func:`main` and the Python API leave the collector alone,
    as they leave the BLAS threads, and exit through ``SystemExit`` as usual.
    """
    import gc

    gc.disable()
    _reopen_closed_streams()  # before main, so that _leave writes on them whatever main does
    try:
        main()
    except SystemExit as done:
        _leave(done.code)


def _leave(code) -> None:
    """End the console script's process with ``code`` (``sys.exit``'s meaning), skipping the
    interpreter's teardown.

    What a normal exit does that anyone could observe is done first, in its order: non-daemon
    threads are joined, ``atexit`` functions run, stdout and stderr are flushed (every file
    dpcost writes is closed by a ``with`` block before the command returns). What is skipped
    is freeing each of the ~250 modules' objects one by one and the garbage collector's last
    pass over all of them (it runs at exit even when disabled): 15 ms of CPU, more than
    dpcost's plan takes to compute, for memory the operating system takes back at once
    (docs/performance.md).
    """
    import atexit

    join_threads = getattr(sys.modules.get("threading"), "_shutdown", None)  # what Py_FinalizeEx calls first
    if join_threads is not None:
        join_threads()
    atexit._run_exitfuncs()
    message = None
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, exit status 1, as Python does
        message, code = f"{code}\n", 1
    for stream, text in ((sys.stdout, None), (sys.stderr, message)):
        try:
            if text:
                stream.write(text)
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader left, or the stream is closed: as Unix tools do
            pass
        except OSError:  # output lost (disk full, I/O error): Python's own exit status for it
            code = code or 120
    os._exit(code & 0xFF)


if __name__ == "__main__":
    run()
