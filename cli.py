"""dpcost: the command line (thin typer layer over costmodel and hardware).

Every command prints JSON with ``--json``; bad input gives one ``error: …`` line on stderr and
exit code 2.
"""

from __future__ import annotations

import typer
import typer.core

from costmodel.commands import (
    calibrate_cmd,
    collective_cmd,
    hardware_cmd,
    iteration_cmd,
    nccl_cmd,
    plan_cmd,
    plot_cmd,
    sweep_cmd,
)

# Help is click's plain text: typer's rich help loads rich.markdown and markdown-it (about half
# of `dpcost --help`'s start-up) for formatting dpcost does not use. typer-slim (pinned <0.20)
# reads this flag at call time; dpcost's own tables still use rich on a terminal.
typer.core.HAS_RICH = False

app = typer.Typer(
    name="dpcost",
    help="Cost model and planner for data-parallel training communication.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)

app.command("formula")(collective_cmd.formula)
app.command("collective")(collective_cmd.collective)
app.command("compare")(collective_cmd.compare)
app.command("sweep")(sweep_cmd.sweep)
app.command("iteration")(iteration_cmd.iteration)
app.command("plan")(plan_cmd.plan)
app.command("calibrate")(calibrate_cmd.calibrate)
app.command("nccl-table")(nccl_cmd.nccl_table)
app.add_typer(hardware_cmd.app, name="hardware")
app.add_typer(plot_cmd.app, name="plot")


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


def main() -> None:
    """Console-script entry point: usage errors become one ``error: …`` line and exit code 2."""
    import sys

    import click

    try:
        code = app(standalone_mode=False)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:  # output piped into `head` & co.: stop quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.exceptions.UsageError as error:
        from dpbase.text import printable

        hint = f" (see: dpcost {error.ctx.command_path.partition(' ')[2]} --help)".replace("  ", " ") if error.ctx else ""
        if "--json" in sys.argv[1:]:  # a script asked for JSON: the usage error is JSON too
            import json

            param = getattr(error, "param", None)
            field = param.opts[0] if param is not None and getattr(param, "opts", None) else None
            sys.stdout.write(json.dumps({"error": {"field": field, "got": None, "allowed": None,
                                                   "message": error.format_message()}}, indent=2) + "\n")
        sys.stderr.write(f"error: {printable(error.format_message())}{hint}\n")
        sys.exit(2)
    except click.exceptions.ClickException as error:
        from dpbase.text import printable

        sys.stderr.write(f"error: {printable(error.format_message())}\n")
        sys.exit(error.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
