"""An env page whose source is a module's docstring (the mkdocs hook ``docs/hooks/env_docstrings.py``
puts it in) still reads on a code host: a title and a pointer to the module, which the hook replaces."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in (ROOT / "docs" / "envs").glob("*.md") if p.read_text(encoding="utf-8").startswith("<!-- module-docstring:"))


def hook():
    spec = importlib.util.spec_from_file_location("env_docstrings", ROOT / "docs" / "hooks" / "env_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_docstring_page_shows_a_title_and_the_module_on_a_code_host():
    assert len(PAGES) >= 5
    for page in PAGES:
        visible = re.sub(r"<!--.*?-->", "", page.read_text(encoding="utf-8"), flags=re.S).strip()
        title = visible.splitlines()[0]
        assert title.startswith("# "), page.name
        (target,) = re.findall(r"\]\(\.\./\.\./([^)]+)\)", visible.split("\n\n")[1])
        assert (ROOT / target).is_file(), (page.name, target)


def test_the_hook_replaces_the_title_and_pointer_with_the_docstring():
    docs = hook()
    for page in PAGES:
        source = page.read_text(encoding="utf-8")
        module = docs.MARKER.match(source).group(1)
        built = docs.on_page_markdown(source)
        docstring = docs._docstring(module)
        assert built.startswith(docstring) and "This page is the docstring of" not in built, page.name
        visible_title = re.sub(r"<!--.*?-->", "", source, flags=re.S).strip().splitlines()[0]
        assert docstring.splitlines()[0].startswith(visible_title), (page.name, "the title is the docstring's")
    bare = "intro\n<!-- module-docstring: llm_coop_envs.core.reward_fns -->\nmore"  # no closing line: the marker alone
    assert docs.on_page_markdown(bare) == f"intro\n{docs._docstring('llm_coop_envs.core.reward_fns')}\nmore"
