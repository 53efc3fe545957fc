"""A headless Chromium driven over WebDriver (no tests here): Debian's chromium and chromedriver.

Nothing is downloaded: the browser and the driver are the system's (``/usr/bin/chromium``,
``/usr/bin/chromedriver``, Debian's ``chromium`` and ``chromium-driver`` packages) and Selenium
is given both paths, so Selenium Manager never runs.  Without them, :func:`chromium` skips the
test with one line saying how to install them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("VAULTSYNC_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("VAULTSYNC_CHROMEDRIVER", "/usr/bin/chromedriver"))
INSTALL = "apt-get install chromium chromium-driver"
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--enable-unsafe-swiftshader",  # WebGL in software: there is no GPU
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
)
WAIT = 120.0
"""Seconds to wait for a page state: a bound against a hang, not a speed check."""


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} not found: install Chromium and its driver ({INSTALL})"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a fresh profile, quit afterwards; skips when not installed."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="vaultsync-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something truthy; fail after :data:`WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"the page never reached: {what}")
        time.sleep(0.1)
