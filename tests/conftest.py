import pytest


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def _browser_missing(config) -> str:
    """Why the browser tests cannot run here ("" when they can): they run only when asked
    for (`pytest -m browser`: each opens a 5 MB page in Chromium, too slow for the CPU
    suite), with Playwright and a Chromium binary installed."""
    if "browser" not in (config.getoption("markexpr", "") or ""):
        return "browser tests run with `pytest -m browser`"
    from browser_support import chromium_path

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs Playwright: pip install playwright"
    if chromium_path() is None:
        return "needs a Chromium binary (apt-get install chromium, or set REDUCEBENCH_CHROMIUM)"
    return ""


def pytest_collection_modifyitems(config, items):
    browser_items = [item for item in items if "browser" in item.keywords]
    if browser_items:
        reason = _browser_missing(config)
        if reason:
            for item in browser_items:
                item.add_marker(pytest.mark.skip(reason=reason))
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
