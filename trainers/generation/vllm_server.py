"""The vLLM server engine: a ``vllm serve --enable-lora`` process reached over HTTP.

It uses the server's OpenAI-compatible completions endpoint and its runtime LoRA endpoints
(``/v1/load_lora_adapter`` and ``/v1/unload_lora_adapter``, enabled on the server by
``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``). A request names the adapter as its ``model`` and sends
the prompt as token ids; the sampled token ids come back through ``return_tokens_as_token_ids``
(each logprob token is ``"token_id:<id>"``) or, on newer servers, ``token_ids``. Requests are sent
concurrently so the server batches every agent's prompts together.

A server that does not answer within ``timeout_s``, refuses a request or answers something else
than the expected JSON raises :class:`VLLMServerError` with what was asked and what came back.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from trainers.generation.vllm_backend import Job, Sample, ServedAdapter, stop_parameters

MAX_PARALLEL_REQUESTS = 32
_EXCERPT = 300


class VLLMServerError(RuntimeError):
    """The vLLM server could not be reached, refused a request or answered malformed data."""


class ServerEngine:
    def __init__(self, url: str, timeout_s: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        models = self._call("GET", "/v1/models")
        if not isinstance(models, dict) or not isinstance(models.get("data"), list):
            raise VLLMServerError(f"{self.url}/v1/models did not list models; is this a vLLM server?")

    def load(self, adapter: ServedAdapter) -> None:
        self._call("POST", "/v1/load_lora_adapter", {"lora_name": adapter.name, "lora_path": str(adapter.path)})

    def unload(self, adapter: ServedAdapter) -> None:
        self._call("POST", "/v1/unload_lora_adapter", {"lora_name": adapter.name})

    def generate(self, jobs: Sequence[Job]) -> list[list[Sample]]:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_REQUESTS, len(jobs))) as pool:
            return list(pool.map(self._complete, jobs))

    def close(self) -> None:
        """Nothing held open: every call is its own HTTP request."""

    def _complete(self, job: Job) -> list[Sample]:
        answer = self._call("POST", "/v1/completions", completion_body(job))
        try:
            choices = sorted(answer["choices"], key=lambda c: c["index"])
            samples = [_sample(choice) for choice in choices]
        except (KeyError, TypeError, ValueError) as error:
            raise VLLMServerError(
                f"Malformed completion from {self.url} for adapter {job.adapter.name!r} ({error!r}): "
                f"{_excerpt(answer)}"
            ) from error
        if len(samples) != job.num_samples:
            raise VLLMServerError(f"{self.url} returned {len(samples)} completions, {job.num_samples} were asked.")
        return samples

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One HTTP call; JSON answers are decoded, plain-text ones (the LoRA endpoints') returned as text."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
                is_json = "json" in response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:_EXCERPT]
            hint = _hint(path, error.code)
            raise VLLMServerError(f"{method} {self.url}{path} failed with HTTP {error.code}: {detail}{hint}") from error
        except (TimeoutError, socket.timeout) as error:
            raise VLLMServerError(f"{method} {self.url}{path} got no answer within {self.timeout_s} s "
                                  "(vllm_timeout_s).") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, (TimeoutError, socket.timeout)):
                raise VLLMServerError(f"{method} {self.url}{path} got no answer within {self.timeout_s} s "
                                      "(vllm_timeout_s).") from error
            raise VLLMServerError(f"Cannot reach the vLLM server at {self.url} ({error.reason}); "
                                  "is `vllm serve` running there?") from error
        text = raw.decode(errors="replace")
        if not is_json:
            return text
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise VLLMServerError(f"{method} {self.url}{path} answered invalid JSON: {text[:_EXCERPT]!r}") from error


def completion_body(job: Job) -> dict[str, Any]:
    """The ``/v1/completions`` request of one job: its adapter as ``model``, its prompt as token ids."""
    sampling = job.sampling
    return {
        "model": job.adapter.name,
        "prompt": list(job.prompt_ids),
        "n": job.num_samples,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_new_tokens,
        **stop_parameters(sampling),
        "logprobs": 0,  # the sampled token's log-probability only
        "return_tokens_as_token_ids": True,
        **({"seed": job.seed} if job.seed is not None else {}),
    }


def _sample(choice: dict[str, Any]) -> Sample:
    logprobs = choice.get("logprobs") or {}
    token_ids = choice.get("token_ids")
    if token_ids is None:
        token_ids = [_token_id(token) for token in logprobs["tokens"]]
    values = logprobs.get("token_logprobs")
    token_ids = tuple(int(t) for t in token_ids)
    if values is not None and (len(values) != len(token_ids) or any(v is None for v in values)):
        values = None
    return Sample(
        str(choice["text"]), token_ids, tuple(float(v) for v in values) if values is not None else None,
        choice.get("finish_reason"),
    )


def _token_id(token: str) -> int:
    prefix = "token_id:"
    if not isinstance(token, str) or not token.startswith(prefix):
        raise ValueError(f"token {token!r} is not 'token_id:<id>' (return_tokens_as_token_ids unsupported?)")
    return int(token[len(prefix):])


def _hint(path: str, status: int) -> str:
    if path.endswith("_lora_adapter") and status in (404, 405):
        return " (start the server with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora)"
    if path.endswith("_lora_adapter"):
        return " (the server must read the adapter folder: vllm_adapter_dir on a disk it sees)"
    return ""


def _excerpt(value: Any) -> str:
    return json.dumps(value)[:_EXCERPT] if not isinstance(value, str) else value[:_EXCERPT]
