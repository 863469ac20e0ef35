"""The trainer presets are TOML files in ``trainers/presets/``: each loads into a valid config, opens
with a comment on what it is for, ships as package data, and is the set the training guide lists."""

import fnmatch
import re
from pathlib import Path

import pytest

from trainers.config import PRESETS, TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "trainers" / "presets"
FILES = sorted(FOLDER.glob("*.toml"))


def test_every_file_is_a_preset():
    assert FILES and sorted(PRESETS) == sorted(f.stem for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_preset_loads_into_a_valid_config_and_says_what_it_is_for(path):
    cfg = load_config(preset=path.stem)
    assert isinstance(cfg, TrainConfig)
    for key, value in PRESETS[path.stem].items():
        assert key in cfg.to_dict(), key
        if not isinstance(value, dict):
            assert getattr(cfg, key) == value, key
    assert path.read_text(encoding="utf-8").startswith(f"# {path.stem}: ")


def test_the_training_guide_lists_exactly_the_presets():
    guide = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    table = guide[guide.index("| preset | setting |"):].split("\n\n")[0]
    listed = re.findall(r"^\| `([^`]+)` \|", table, flags=re.MULTILINE)
    assert sorted(listed) == sorted(PRESETS)


def test_preset_files_ship_as_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["trainers"]
    names = [str(p.relative_to(ROOT / "trainers")) for p in FILES]
    assert all(any(fnmatch.fnmatch(name, glob) for glob in globs) for name in names)
