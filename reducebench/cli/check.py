"""`check`: every chosen rung once, untimed, verified. What `sanitize` runs under each tool."""

from __future__ import annotations

import click

from reducebench.cli._console import make_console
from reducebench.cli.run import abandon_lost_context
from reducebench.cli._kernels import compile_user_kernels, kernel_options, kernel_specs
from reducebench.config import settings_from
from reducebench.inputs import make_input
from reducebench.runner import CaseFailed, CaseSkipped, ContextLost, expand_cases, skip_reason
from reducebench.tolerance import check as check_result


@click.command("check")
@click.option("--size", default="1000003", show_default=True)
@click.option("--dtype", default="float32", show_default=True)
@click.option("--rung", default="all", show_default=True)
@click.option("--block", default="256", show_default=True)
@click.option("--device", default=0, show_default=True, type=int)
@click.option("--seed", default=1234, show_default=True, type=int)
@kernel_options
@click.pass_context
def check(ctx: click.Context, size: str, dtype: str, rung: str, block: str, device: int,
          seed: int, **kernel_args) -> None:
    """Run each rung once (twice, to catch state left behind) and verify, without timing."""
    settings = settings_from({"size": size, "dtype": dtype, "rung": rung, "block": block,
                              "kernels": kernel_specs(kernel_args)})
    from reducebench.device import open_backend

    backend = open_backend(device)
    compile_user_kernels(settings, backend)
    console = make_console()
    failed = 0
    inputs: dict = {}
    for case in expand_cases(settings):
        if skip_reason(case):
            continue
        key = (case.n, case.dtype.name)
        if key not in inputs:
            inputs.clear()
            host = make_input(case.n, case.dtype, seed)
            inputs[key] = (host, backend.upload(host, case.dtype))
        host, x = inputs[key]
        try:
            results, plan = backend.verify_once(case, x)
        except CaseSkipped as exc:
            console.print(f"{case.label}: skipped ({exc})")
            continue
        except (CaseFailed, ContextLost) as exc:
            console.print(f"{case.label}: [red]error[/] {exc}")
            failed += 1
            if isinstance(exc, ContextLost):
                abandon_lost_context(backend)
            continue
        verdicts = [check_result(v, host.reference, case.n, case.dtype, host.abs_sum,
                                 plan.chain, plan.atomics) for v in results]
        ok = all(v[0] for v in verdicts)
        failed += not ok
        console.print(f"{case.label}: {'ok' if ok else '[red]FAIL[/]'} "
                      f"{results} vs {host.reference}")
    if failed:
        ctx.exit(1)


COMMANDS = [check]
