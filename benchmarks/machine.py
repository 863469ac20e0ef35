"""Where and under what load numbers were measured, for the results files."""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any


def machine_info() -> dict[str, Any]:
    """The platform, Python version, processor and core count."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }


def uptime() -> str:
    """The machine's load now: ``uptime``'s line, or the load averages where there is no ``uptime``."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
