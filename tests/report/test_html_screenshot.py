"""The report page as a browser shows it: headless Chromium screenshot of index.html."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

WIDTH, HEIGHT = 1280, 1600
GROUP_HEADER = np.array([0xC5, 0xCA, 0xE9])  # CSS: table.t tr.group th background
TITLE_RULE = np.array([0x3F, 0x51, 0xB5])  # CSS: h1 border-bottom


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def share_near(pixels: np.ndarray, colour: np.ndarray, tol: int = 6) -> float:
    return float(np.mean(np.all(np.abs(pixels.astype(int) - colour) <= tol, axis=-1)))


@pytest.mark.skipif(chromium() is None, reason="no chromium binary (Debian: apt-get install chromium)")
def test_index_html_renders_in_headless_chromium(built_report, tmp_path):
    out = built_report
    shot = tmp_path / "shot.png"
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        f"--window-size={WIDTH},{HEIGHT}",
        (out / "index.html").as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape == (HEIGHT, WIDTH, 3)
    white = share_near(pixels, np.array([255, 255, 255]))
    assert 0.3 < white < 0.98, f"page is {white:.0%} white: blank or unstyled"
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # text, tables, figures: not a flat colour
    # the stylesheet applied: the title rule and the tables' group header row are drawn
    assert share_near(pixels, TITLE_RULE) > 0.0005
    assert share_near(pixels, GROUP_HEADER) > 0.002
    dark = float(np.mean(pixels.max(axis=-1) < 100))
    assert dark > 0.005, "no text visible"
