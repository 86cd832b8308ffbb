"""The screenshot of docs/report_h100_default.png: `reducebench report` on a results CSV,
opened in headless Chromium (Playwright driving the system's Chromium), the top of the
page at 1400 px wide.

    python scripts/report_screenshot.py [RESULTS.csv [OUT.png [HEIGHT]]]

Without arguments: the committed H100 default run, docs/report_h100_default.png, 2090 px.
Needs `pip install -e '.[report]' playwright` and a Chromium binary (apt-get install
chromium; REDUCEBENCH_CHROMIUM=/path/to/chrome to use another)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path("results/h100/default_f32_803a10d.csv")
OUT = Path("docs/report_h100_default.png")
WIDTH, HEIGHT = 1400, 2090
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium() -> str:
    found = os.environ.get("REDUCEBENCH_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found:
        sys.exit("no Chromium found: apt-get install chromium, or set REDUCEBENCH_CHROMIUM")
    return found


def write_page(results: Path, page_path: Path) -> Path:
    """`reducebench report RESULTS -o PAGE`, as a user makes the page."""
    subprocess.run([sys.executable, "-m", "reducebench", "report", str(results), "-o",
                    str(page_path)], check=True, stdout=subprocess.DEVNULL)
    return page_path


def main(results: Path = RESULTS, out: Path = OUT, height: int = HEIGHT) -> None:
    from playwright.sync_api import sync_playwright  # only here: --help needs no browser

    with tempfile.TemporaryDirectory() as folder:
        page_path = write_page(results, Path(folder) / "report.html")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=ARGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.route("**", lambda route: route.continue_()
                       if route.request.url.startswith(("file:", "data:", "blob:", "about:"))
                       else route.abort())
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            page.wait_for_function("""() => Array.from(document.querySelectorAll(
                '.plotly-graph-div')).every(d => d._fullLayout)""")
            page.wait_for_timeout(500)  # Plotly's last transitions
            full = page.evaluate("document.documentElement.scrollHeight")
            page.screenshot(path=str(out), full_page=True,
                            clip={"x": 0, "y": 0, "width": WIDTH, "height": min(height, full)})
            browser.close()
    print(f"wrote {out} ({WIDTH} x {min(height, full)} px) from {results}")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] in (["-h"], ["--help"]):
        print(__doc__)
        sys.exit(0)
    main(Path(arguments[0]) if arguments else RESULTS,
         Path(arguments[1]) if len(arguments) > 1 else OUT,
         int(arguments[2]) if len(arguments) > 2 else HEIGHT)
