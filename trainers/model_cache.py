"""Moved: the model cache lives in :mod:`llm_coop_envs.lm.cache` now.

This module re-exports its public names so that ``from trainers.model_cache import resolve_model``
keeps working. New code imports from ``llm_coop_envs.lm.cache``; a test that replaces one of the
cache's functions or modules (``monkeypatch.setattr``) patches that module, where the names are
looked up.
"""

from __future__ import annotations

from llm_coop_envs.lm.cache import (
    BUILD_FILE,
    DEFAULT_MODEL,
    DEFAULT_MODEL_ALIASES,
    DEFAULT_MODEL_HUB_ID,
    DEFAULT_MODEL_LABEL,
    GGUF_NAME,
    GGUF_SHA256,
    NETWORK_ATTEMPTS,
    PACKAGED_MODEL_ID,
    PORTABLE_TOKENIZER_CLASS,
    RETRY_WAIT_S,
    WHEEL_REQUIREMENT,
    ModelUnavailable,
    PullFailed,
    cache_dir,
    check_model_available,
    default_model_path,
    is_pulled,
    make_portable,
    model_label,
    model_record,
    pull_model,
    resolve_model,
)

__all__ = [
    "BUILD_FILE",
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_ALIASES",
    "DEFAULT_MODEL_HUB_ID",
    "DEFAULT_MODEL_LABEL",
    "GGUF_NAME",
    "GGUF_SHA256",
    "NETWORK_ATTEMPTS",
    "PACKAGED_MODEL_ID",
    "PORTABLE_TOKENIZER_CLASS",
    "RETRY_WAIT_S",
    "WHEEL_REQUIREMENT",
    "ModelUnavailable",
    "PullFailed",
    "cache_dir",
    "check_model_available",
    "default_model_path",
    "is_pulled",
    "make_portable",
    "model_label",
    "model_record",
    "pull_model",
    "resolve_model",
]
