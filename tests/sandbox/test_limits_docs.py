"""The sandbox's limits are written once, in ``SandboxConfig``: docs/sandbox.md's table is generated
from the dataclass (``docs/hooks/sandbox_limits.py``) and the page types none of the defaults."""

import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest

from llm_coop_envs.sandbox.config import SandboxConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location("sandbox_limits_hook", ROOT / "docs" / "hooks" / "sandbox_limits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_has_every_field_its_default_and_its_docstring(hook):
    rows = {row.split("|")[1].strip(" `"): row for row in hook.limits_table().splitlines()[2:]}
    assert list(rows) == [f.name for f in dataclasses.fields(SandboxConfig)]
    assert "| 1,024 | Address-space limit (RLIMIT_AS)" in rows["memory_mb"]
    assert '| `"auto"` |' in rows["backend"] and "| `None` |" in rows["cpu_s"]
    assert rows["preload_modules"].count(",") >= len(SandboxConfig().preload_modules) - 1


def test_the_page_uses_the_table_and_restates_no_default(hook):
    page = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    assert hook.MARKER in page
    for field in dataclasses.fields(SandboxConfig):
        default = getattr(SandboxConfig(), field.name)
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            written = "|".join(re.escape(form) for form in {str(default), f"{default:,}", f"{default:_}"})
            typed = rf"`?{field.name}`?\s*(=|\|)\s*({written})\b"
            assert not re.search(typed, page), f"docs/sandbox.md types the default of {field.name}"
