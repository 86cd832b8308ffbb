"""Headless Chromium for the report's browser tests (and scripts/report_screenshot.py):
the operating system's Chromium driven by Playwright, which cannot download its own
browser here. Nothing may reach the network: every request that is not a file, data,
blob or about URL is recorded and aborted."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def chromium_path() -> str | None:
    """REDUCEBENCH_CHROMIUM, else a Chromium (or Chrome) on PATH."""
    given = os.environ.get("REDUCEBENCH_CHROMIUM")
    if given:
        return given if os.path.exists(given) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)


@dataclass
class Watched:
    """What a page did while it was open: console errors, uncaught exceptions, and every
    request that would have left the machine."""

    page: object
    errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)


def open_page(browser, path, width: int = 1400, height: int = 1000) -> Watched:
    """A file in a new page, watched from before it loads; waits until every Plotly
    chart of the page has drawn."""
    page = browser.new_page(viewport={"width": width, "height": height})
    watched = Watched(page)

    def on_console(message) -> None:
        if message.type == "error":
            watched.errors.append(f"console: {message.text}")

    def on_request(request) -> None:  # every request the page makes, routed or not
        if not request.url.startswith(LOCAL_SCHEMES):
            watched.network.append(request.url)

    def on_route(route) -> None:  # ... and none of them leaves the machine
        if route.request.url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda exc: watched.errors.append(f"page error: {exc}"))
    page.on("request", on_request)
    page.route("**", on_route)
    page.goto(path.resolve().as_uri(), wait_until="load")
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.plotly-graph-div'))
                                   .every(d => d._fullLayout && d.data)""", timeout=30000)
    return watched
