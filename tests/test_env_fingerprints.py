"""Every registered env id keeps meaning what it meant when a result named it.

Each id's fingerprint (:mod:`llm_coop_envs.fingerprint`: both agents' observations at reset and at turn
2, the hidden tests, the rewards and feedback of fixed honest replies, the first ids of its splits) is
stored in ``tests/env_fingerprints.json``. **A changed fingerprint means a new version**: register the
change under a new id (``name-vN+1``; the old id stays registered, warning, with its hole named) and
never edit a stored fingerprint. An id without a stored fingerprint fails: its author adds one in the
same commit with

    python -m llm_coop_envs.fingerprint --add tests/env_fingerprints.json

which adds only the missing ids and leaves every stored one as it is. Ids that need data (the shared
data folder through ``LLM_COOP_DATA_DIR``) or the language model are checked where these are present
and skipped, with the reason, where not. The negative controls change one prompt word, one hidden test
or one reward constant in a copy and the fingerprint must change.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import llm_coop_envs
from llm_coop_envs.fingerprint import Unavailable, fingerprint, fingerprint_of

STORED_FILE = Path(__file__).with_name("env_fingerprints.json")
STORED = json.loads(STORED_FILE.read_text(encoding="utf-8"))
PENDING: dict[str, str] = {}
"""Ids registered while their definition is still moving; each leaves this list in the commit that
stores its fingerprint."""


@pytest.mark.parametrize("env_id", llm_coop_envs.registered_ids())
def test_each_id_matches_its_stored_fingerprint(env_id):
    if env_id not in STORED:
        if env_id in PENDING:
            pytest.skip(PENDING[env_id])
        pytest.fail(f"{env_id} has no stored fingerprint: add it with "
                    f"`python -m llm_coop_envs.fingerprint --add tests/env_fingerprints.json` in the commit that registers it")
    try:
        found = fingerprint(env_id)
    except Unavailable as error:
        pytest.skip(str(error))
    changed = sorted(part for part in STORED[env_id] if STORED[env_id][part] != found.get(part))
    assert not changed, (f"{env_id} changed its meaning ({', '.join(changed)}): a change to its problems, observations "
                         "or rewards is a new version (register name-vN+1); never edit the stored fingerprint")


def test_no_pending_id_is_also_stored():
    assert not set(PENDING) & set(STORED), "an id whose fingerprint is stored leaves PENDING"


# ---------------------------------------------------------------------------- negative controls
SUITE = Path(llm_coop_envs.__file__).parent / "coding" / "suites" / "coop_basics"


def _fingerprint_of_suite(folder, edit=None):
    """The fingerprint of ``coop_basics-v1`` on a copy of its packaged suite, ``edit`` applied to the
    first problem of tier 1."""
    shutil.copytree(SUITE, folder)
    rows = json.loads((folder / "tier1.json").read_text(encoding="utf-8"))
    if edit is not None:
        edit(rows[0])
    (folder / "tier1.json").write_text(json.dumps(rows), encoding="utf-8")

    def make(**kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return llm_coop_envs.make("coop_basics-v1", suite_dir=str(folder), **kwargs)

    return fingerprint_of(make)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return _fingerprint_of_suite(tmp_path_factory.mktemp("base") / "suite")


def test_one_prompt_word_changes_the_fingerprint(tmp_path, baseline):
    def edit(row):
        assert "new list" in row["prompt"]
        row["prompt"] = row["prompt"].replace("new list", "fresh list", 1)

    changed = _fingerprint_of_suite(tmp_path / "suite", edit)
    assert changed["reset/0"] != baseline["reset/0"]
    assert changed["reset/1"] == baseline["reset/1"]  # the other problem is the same: the hash is not noise


def test_one_hidden_test_changes_the_fingerprint(tmp_path, baseline):
    def edit(row):
        # expected values come from the reference solution, so the test's input is what a change alters
        (case,) = [case for case in row["tests"] if case["args"] == [[0]]]
        case["args"], case["expected"] = [[1]], [11]

    changed = _fingerprint_of_suite(tmp_path / "suite", edit)
    assert changed["hidden_tests"] != baseline["hidden_tests"]


def test_one_reward_constant_changes_the_fingerprint(tmp_path, baseline, monkeypatch):
    from llm_coop_envs.coding import reward

    monkeypatch.setattr(reward, "SYNTAX", reward.SYNTAX + 0.25)
    changed = _fingerprint_of_suite(tmp_path / "suite")
    assert changed["step/reference"] != baseline["step/reference"]
    assert changed["reset/0"] == baseline["reset/0"]


def test_the_regenerate_command_only_adds_missing_ids(tmp_path):
    from llm_coop_envs.fingerprint import add_missing

    path = tmp_path / "fingerprints.json"
    path.write_text(json.dumps({"coop_basics-v1": {"problems": "stored"}}), encoding="utf-8")
    assert add_missing(path, ["coop_basics-v1", "coop_basics-v0"]) == ["coop_basics-v0"]
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["coop_basics-v1"] == {"problems": "stored"}  # never rewritten
    assert written["coop_basics-v0"] == STORED["coop_basics-v0"]
