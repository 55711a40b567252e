"""A real headless Chromium for the report's tests: the page as a browser renders it,
a screenshot, and every URL the page asked the network for (Chromium's own net log)."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Nothing resolves: a request that escaped would fail, and still show in the net log.
FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root in a container
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",  # Chromium's own update and safe-browsing calls
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--virtual-time-budget=3000",  # run the page's script to its end before dumping
    "--enable-logging=stderr",
    "--v=0",
]


def chromium() -> str:
    """The browser, or a skip that says why: .ci/run installs Chromium when missing."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine (.ci/run installs it: apt-get install chromium)")


@dataclass(frozen=True)
class Visit:
    dom: str  # the page after its script ran
    urls: list[str]  # every URL the page requested, from the net log
    console: str  # what Chromium logged (CSP violations show here)


def visit(page: Path, scratch: Path) -> Visit:
    net_log = scratch / "net-log.json"
    profile = scratch / "profile"
    result = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--log-net-log={net_log}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return Visit(result.stdout, page_requests(net_log), result.stderr)


def page_requests(net_log: Path) -> list[str]:
    """The URLs of requests made for a page opened from a file: their network isolation
    key is the file origin's. Chromium's own background calls (network time, account
    checks) carry another key and are not the page's doing."""
    text = net_log.read_text(errors="replace").rstrip()
    try:
        events = json.loads(text)["events"]
    except json.JSONDecodeError:  # a log cut at exit: close its list
        events = json.loads(text.rstrip(",") + "]}")["events"]
    return [
        str(event["params"]["url"])
        for event in events
        if str(event.get("params", {}).get("network_isolation_key", "")).startswith("file://")
        and "url" in event["params"]
    ]


# Run in the page after its own script: where each chart lies against the window, as
# JSON in the body's data-measured attribute (read back from the dumped DOM).
MEASURE = """
const width = document.documentElement.clientWidth;
const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; };
const charts = [...document.querySelectorAll('svg.chart')].map(svg => ({
  css: svg.getAttribute('class'), ...box(svg),
  scrolls: svg.parentElement.scrollWidth > svg.parentElement.clientWidth + 1,
  marks: [...svg.querySelectorAll('[data-commit]')].map(box),
}));
document.body.dataset.measured = JSON.stringify(
  {width, pageWidth: document.documentElement.scrollWidth, charts});
"""


def measure(page: Path, scratch: Path, width: int) -> dict[str, Any]:
    """The page laid out in a ``width`` px wide window: `MEASURE`'s findings. The page's
    own policy would refuse an added script, so a copy without it is measured."""
    text = page.read_text()
    text = re.sub(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">', "", text)
    copy = scratch / f"measured-{width}.html"
    copy.write_text(text.replace("</body>", f"<script>{MEASURE}</script></body>"))
    result = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={scratch / f'measure-profile-{width}'}",
            f"--window-size={width},1200",
            "--dump-dom",
            copy.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(r'data-measured="([^"]*)"', result.stdout)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))  # type: ignore[no-any-return]


def screenshot(page: Path, scratch: Path, out: Path, width: int = 1200, height: int = 2200) -> None:
    result = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={scratch / 'shot-profile'}",
            f"--window-size={width},{height}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and out.exists(), result.stderr[-2000:]


def network_urls(urls: list[str], page: Path) -> list[str]:
    """The URLs that are neither the page itself nor Chromium's own internals."""
    return [u for u in urls if u != page.as_uri() and not u.startswith(("data:", "about:", "chrome:"))]


def ink(png: Path) -> float:
    """The share of pixels that are not the page's white background (a PNG decoder in a
    few lines, so that the test needs no imaging library)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    assert depth == 8 and kind in (2, 6), "8-bit RGB or RGBA"
    channels = 3 if kind == 2 else 4
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + length])
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    coloured = 0
    for row in range(height):
        kind_of_filter = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind_of_filter == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind_of_filter == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind_of_filter == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        coloured += sum(
            1 for x in range(0, stride, channels) if line[x] < 240 or line[x + 1] < 240 or line[x + 2] < 240
        )
        previous = line
    return coloured / (width * height)
