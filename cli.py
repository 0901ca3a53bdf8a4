"""dpcost: the command line (thin typer layer over costmodel and hardware).

Every command prints JSON with ``--json``; bad input gives one ``error: …`` line on stderr and
exit code 2.
"""

from __future__ import annotations

import typer

from costmodel.commands import calibrate_cmd, collective_cmd, hardware_cmd, iteration_cmd, nccl_cmd

app = typer.Typer(
    name="dpcost",
    help="Cost model and planner for data-parallel training communication.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
)

app.command("formula")(collective_cmd.formula)
app.command("collective")(collective_cmd.collective)
app.command("compare")(collective_cmd.compare)
app.command("iteration")(iteration_cmd.iteration)
app.command("calibrate")(calibrate_cmd.calibrate)
app.command("nccl-table")(nccl_cmd.nccl_table)
app.add_typer(hardware_cmd.app, name="hardware")


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
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
