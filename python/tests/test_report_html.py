"""report.html as a person sees it: a shipped scenario (E1, shortened) is run and reported,
the page is opened in headless Chromium (Debian's, through Playwright), and the test waits
for every chart, asserts that each one drew (an SVG with traces in it) and that the console
shows no JavaScript error, and saves a screenshot of the whole page. The screenshot's path is
printed; it is kept under target/test-output/report-html/ (or $MPTCP_LAB_TEST_OUT).

Chromium comes from apt (scripts/setup installs it); without it, or without the Python
package playwright, the test is skipped, and with MPTCP_LAB_REQUIRE_KERNEL=1 (as CI sets) it
fails instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require

CHROMIUM = os.environ.get("MPTCP_LAB_CHROMIUM", "/usr/bin/chromium")


def missing_piece() -> str | None:
    if not Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (python/requirements-dev.txt)"
    return None


@pytest.fixture
def browser():
    require(missing_piece())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # No sandbox: the tests run as root, which Chromium's sandbox refuses.
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def output_folder() -> Path:
    base = Path(os.environ.get("MPTCP_LAB_TEST_OUT", REPO / "target" / "test-output"))
    folder = base / "report-html"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run(cli: Path, scenario: str, out: Path, *extra: str) -> None:
    subprocess.run(
        [str(cli), "run", str(REPO / "scenarios" / scenario), "--out", str(out), *extra],
        check=True,
        capture_output=True,
        text=True,
    )


class Opened:
    """A page opened offline (any request for something other than a local file refused
    and recorded), its console errors recorded, every chart waited for and measured."""

    def __init__(self, browser, html: Path) -> None:
        assert html.exists(), html
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.elsewhere: list[str] = []
        self.errors: list[str] = []

        def offline(route):
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                self.elsewhere.append(route.request.url)
                route.abort()

        self.page.route("**/*", offline)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(html.as_uri())
        self.charts = int(self.page.get_attribute("body", "data-charts"))
        self.page.wait_for_function(
            """n => {
                const charts = document.querySelectorAll('.plotly-graph-div');
                return charts.length === n &&
                    [...charts].every(c => c.querySelector('svg.main-svg g.trace'));
            }""",
            arg=self.charts,
            timeout=30_000,
        )
        drawn = self.page.evaluate(
            """() => [...document.querySelectorAll('.plotly-graph-div')].map(c => ({
                id: c.id,
                traces: c.querySelectorAll('g.trace').length,
                width: c.getBoundingClientRect().width,
                height: c.getBoundingClientRect().height,
            }))"""
        )
        for chart in drawn:
            assert chart["traces"] > 0 and chart["width"] > 100 and chart["height"] > 100, chart

    def screenshot(self, name: str) -> None:
        """Keeps a screenshot of the whole page and prints where."""
        shot = output_folder() / name
        self.page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}", file=sys.stderr)

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.elsewhere == [], f"the page asked the network for {self.elsewhere}"


def test_e1_report_html_renders_every_chart(cli: Path, browser, tmp_path: Path) -> None:
    out = tmp_path / "e1"
    run(cli, "e1-khalili.toml", out, "--duration", "40s", "--report")
    # plotly.js is 4.65 MB of it; the decimated series keep the rest small.
    assert (out / "report.html").stat().st_size < 6_000_000
    opened = Opened(browser, out / "report.html")
    # Ours against the published (two metrics) and the goodput and queue series at the least.
    assert opened.charts >= 4
    page = opened.page
    # The checks, coloured by verdict.
    assert page.locator("tr.pass, tr.fail").count() > 0
    # Table 1 of the Balia draft in its layout: a row per case and type, a column per
    # algorithm, ours beside the published figure in every cell.
    paper = page.locator("table.paper")
    assert paper.count() == 1
    heads = paper.locator("tr").first.inner_text().split("\t")
    assert [h.strip() for h in heads] == ["case", "type", "single-path", "LIA", "OLIA", "Balia"]
    assert paper.locator("td.pass, td.fail").count() == 16
    assert "published 9.47" in paper.inner_text()
    opened.screenshot("e1-khalili-report.png")
    opened.clean()


def test_compare_html_renders_both_results(cli: Path, browser, tmp_path: Path) -> None:
    """`compare --html` of two results of E3 (shortened to 30 s and to 40 s, two seeds each)."""
    a, b = tmp_path / "a", tmp_path / "b"
    run(cli, "e3-aggregation.toml", a, "--duration", "30s", "--seeds", "2")
    run(cli, "e3-aggregation.toml", b, "--duration", "40s", "--seeds", "2")
    page_path = tmp_path / "compare.html"
    subprocess.run(
        [str(cli), "compare", str(a), str(b), "--html", str(page_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    opened = Opened(browser, page_path)
    assert opened.charts >= 1
    text = opened.page.inner_text("body")
    assert "Every metric both results have" in text
    assert "download goodput (Mbit/s)" in text
    # Both results' lines in the series charts (the first solid, the second dashed).
    assert "A (sim)" in text and "B (sim)" in text
    opened.screenshot("e3-compare.png")
    opened.clean()


def test_e4_sweep_shows_the_rules_points_and_the_tcp_baseline(
    cli: Path, browser, tmp_path: Path
) -> None:
    """E4's buffer sweep (shortened to 25 s, 10 s measured): each RTT difference's run with
    its rule's buffer as a marked point at the buffer the rule gave, and single-path TCP with
    the same buffer as a dashed line."""
    out = tmp_path / "e4"
    run(cli, "e4-rcvbuf.toml", out, "--duration", "25s", "--report")
    opened = Opened(browser, out / "report.html")
    names = opened.page.evaluate(
        """() => [...document.querySelectorAll('.plotly-graph-div')]
            .filter(c => (c.layout.title.text || '').startsWith('E4:'))
            .map(c => c.data.map(t => [t.name || '', t.x]))"""
    )
    assert len(names) == 1, names
    traces = dict(names[0])
    rules = {n: x for n, x in traces.items() if "buffer=1rule" in n}
    # The rule 2 x RTT_max x sum(BW_i) over two 100 Mbps paths: 10 + 10, 10 + 100 and
    # 10 + 500 ms of RTT.
    assert sorted(x[0] for x in rules.values()) == [1.0, 5.5, 25.5], rules
    assert "single-path TCP on path 1" in traces
    assert min(traces["single-path TCP on path 1"]) == 1.0
    md = (out / "report.md").read_text()
    assert "rtt_diff=500ms 25.500" in md and "single-path TCP on path 1" in md
    opened.screenshot("e4-rcvbuf-report.png")
    opened.clean()
