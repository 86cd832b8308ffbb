"""For the GPU tests: run cases through the runner's own path (plan, inputs, execute,
verify), untimed, and list the ones that did not verify."""

from reducebench.measuring.settings import RunSettings
from reducebench.measuring.runner import run


def check_cases(backend, cases, inputs="exact", seed=20261122):
    """The records of `cases`, checked (three poisoned runs each) as `reducebench check`
    does. Cases are reordered by size and dtype so that each input is uploaded once."""
    ordered = sorted(cases, key=lambda c: (c.n, c.dtype.name))
    settings = RunSettings(timed=False, inputs=inputs, seed=seed)
    return run(settings, backend, lambda record: None, cases=ordered)


def failures(records):
    return [f"{r.rung} {r.dtype} n={r.n} block={r.block} {r.params}: {r.status} {r.error}"
            for r in records if r.status not in ("ok", "skipped")]
