import functools
import os
from dataclasses import dataclass, field

import pytest

GPU_MISSING = "needs a CUDA GPU and CuPy"
BROWSER_NOT_ASKED = "browser tests run with `pytest -m browser`"
# The skips this file itself decides, each reported as one line at the end of the run
# rather than one SKIPPED line per test location: {reason: what the line says}.
EXPECTED_SKIPS = {
    GPU_MISSING: "GPU tests skipped: no CUDA GPU and CuPy here "
                 "(`pytest -m gpu` runs them on a GPU machine)",
    BROWSER_NOT_ASKED: "browser tests skipped: `pytest -m browser` runs them "
                       "(Playwright and Chromium)",
}


def pytest_configure(config):
    # pytest imports readline at start-up, and GNU readline exports COLUMNS and LINES
    # (80 and 24 without a terminal) into the process's environment, where every child
    # inherits them: xdist's workers then see COLUMNS=80, and the CLI, which honours
    # COLUMNS, draws 80-column tables that tests written for its 160-column default fail
    # on. The suite must not depend on the terminal it runs from: tests that need a width
    # set COLUMNS themselves.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
        os.unsetenv(name)


@functools.lru_cache(maxsize=1)
def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A plain `pytest` (the whole suite, from testpaths) runs on every core through
    pytest-xdist, where it is installed (the test extras) and no -n was given. Not where
    a GPU is present: tests that time kernels must not share the GPU, or the CPU, with
    other tests. A file or a test named on the command line runs in this process."""
    if hasattr(config, "workerinput"):
        return  # an xdist worker: it runs the tests it is sent, it starts no workers
    from_testpaths = getattr(pytest.Config, "ArgsSource", None)
    whole_suite = from_testpaths is not None and config.args_source == from_testpaths.TESTPATHS
    unset = getattr(config.option, "numprocesses", 0) is None   # 0 too without xdist
    if whole_suite and unset and not _gpu_available():
        config.option.numprocesses = "auto"


def _browser_missing(config) -> str:
    """Why the browser tests cannot run here ("" when they can): they run only when asked
    for (`pytest -m browser`: each opens a 5 MB page in Chromium, too slow for the CPU
    suite), with Playwright and a Chromium binary installed."""
    if "browser" not in (config.getoption("markexpr", "") or ""):
        return BROWSER_NOT_ASKED
    from browser_support import chromium_path

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs Playwright: pip install playwright"
    if chromium_path() is None:
        return "needs a Chromium binary (apt-get install chromium, or set REDUCEBENCH_CHROMIUM)"
    return ""


def pytest_collection_modifyitems(config, items):
    browser_items = [item for item in items if item.get_closest_marker("browser")]
    if browser_items:
        reason = _browser_missing(config)
        if reason:
            for item in browser_items:
                item.add_marker(pytest.mark.skip(reason=reason))
    if _gpu_available():
        return
    for item in items:
        if item.get_closest_marker("gpu"):   # a marker, not any keyword (a param id "gpu")
            # first, so that this reason wins over a test's own skip (a documented
            # command skipped by rule, tests/test_doc_commands.py) where there is no GPU
            item.add_marker(pytest.mark.skip(reason=GPU_MISSING), append=False)


def pytest_terminal_summary(terminalreporter):
    """The skips: one line for each reason of EXPECTED_SKIPS, then every other skip as
    `-rs` would show it (addopts leaves `s` out), so that a skip nobody planned for still
    shows."""
    expected: dict[str, int] = {}
    others: dict[tuple, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        path, lineno, reason = report.longrepr
        reason = reason.removeprefix("Skipped: ")
        if "gpu" in getattr(report, "keywords", {}) and not _gpu_available():
            reason = GPU_MISSING  # whatever else it also lacks (mpirun), it needs a GPU
        if reason in EXPECTED_SKIPS:
            expected[reason] = expected.get(reason, 0) + 1
        else:
            where = os.path.relpath(os.path.abspath(path), terminalreporter.startpath)
            at = where if lineno is None else f"{where}:{lineno}"
            others[(at, reason)] = others.get((at, reason), 0) + 1
    for reason, count in expected.items():
        terminalreporter.write_line(f"{count} {EXPECTED_SKIPS[reason]}")
    for (at, reason), count in others.items():
        terminalreporter.write_line(f"SKIPPED [{count}] {at}: {reason}")


# ---- fixtures the test files share ------------------------------------------------------

@pytest.fixture
def no_gpu_allowed(monkeypatch):
    """Any attempt to reach the device layer fails the test loudly."""
    import reducebench.device

    def forbidden(*args, **kwargs):
        raise AssertionError("the device layer was reached")

    monkeypatch.setattr(reducebench.device, "open_backend", forbidden)


@dataclass
class FakeDevice:
    """What `fake_device` opens: each backend is a FakeCliBackend made with `settings`
    (e.g. {"hooks": ...} to send a signal inside a stage), kept in `opened` in order."""

    settings: dict = field(default_factory=dict)
    opened: list = field(default_factory=list)


@pytest.fixture
def fake_device(monkeypatch) -> FakeDevice:
    """The device layer, faked: every command that opens a GPU opens a FakeCliBackend
    (tests/fakes.py), the host executor of every plan."""
    import reducebench.device
    from fakes import FakeCliBackend

    fake = FakeDevice()

    def open_fake(device=0):
        fake.opened.append(FakeCliBackend(**fake.settings))
        return fake.opened[-1]

    monkeypatch.setattr(reducebench.device, "open_backend", open_fake)
    return fake


@pytest.fixture
def saved_figures(monkeypatch) -> list:
    """Every matplotlib figure saved while the test runs, in order, for a test to look
    into what was drawn (each is still written to its file)."""
    import matplotlib.figure

    saved = []
    real_savefig = matplotlib.figure.Figure.savefig

    def spy(self, *args, **kwargs):
        saved.append(self)
        return real_savefig(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    return saved
