"""Stand-ins that speak vLLM's interfaces at the boundary, for tests on a CPU without vLLM.

* :func:`fake_vllm_modules`: modules ``vllm`` and ``vllm.lora.request`` with ``LLM``,
  ``SamplingParams`` and ``LoRARequest`` as the Python API names them;
* :class:`StandInServer`: an HTTP server with ``/v1/models``, ``/v1/completions``,
  ``/v1/load_lora_adapter`` and ``/v1/unload_lora_adapter`` as ``vllm serve`` answers them.

Both behave like vLLM where it matters here: an adapter is read from its folder (PEFT files) the
first time its id (in-process) or name (server) is seen and is cached under it afterwards, so a
refresh that reused an id would keep serving the old weights. Replies are deterministic tokens
derived from the prompt, the sample index and a checksum of the adapter weights actually loaded.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import types
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

VOCAB = 300


def read_adapter(path: str | Path) -> dict[str, Any]:
    """The tensors of a PEFT adapter folder, as vLLM would read them (fails like vLLM on a bad folder)."""
    from safetensors.torch import load_file

    folder = Path(path)
    if not (folder / "adapter_config.json").is_file():
        raise FileNotFoundError(f"No adapter_config.json in {folder}")
    return load_file(str(folder / "adapter_model.safetensors"))


def checksum(tensors: dict[str, Any]) -> int:
    crc = 0
    for name in sorted(tensors):
        crc = zlib.crc32(tensors[name].float().numpy().tobytes(), crc)
    return crc


def standin_tokens(prompt: list[int], weights: int, index: int, max_tokens: int) -> tuple[list[int], str]:
    """Deterministic reply tokens and the finish reason; odd rows stop early ("stop"), even ones run to length."""
    seed = weights + 7 * index + sum(prompt)
    length = max_tokens if seed % 2 == 0 else max(1, max_tokens // 2)
    tokens = [(seed + 31 * k) % (VOCAB - 2) + 2 for k in range(length)]
    return tokens, "length" if length == max_tokens else "stop"


def standin_logprob(position: int) -> float:
    return -0.125 * (position + 1)


# ---------------------------------------------------------------------------- the Python API
def fake_vllm_modules() -> dict[str, types.ModuleType]:
    """Fresh ``vllm``, ``vllm.lora`` and ``vllm.lora.request`` modules (install them in ``sys.modules``)."""
    vllm = types.ModuleType("vllm")
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")

    @dataclasses.dataclass(frozen=True)
    class LoRARequest:
        lora_name: str
        lora_int_id: int
        lora_path: str

    class SamplingParams:
        def __init__(self, n=1, temperature=1.0, top_p=1.0, max_tokens=16, stop=None, logprobs=None, seed=None,
                     include_stop_str_in_output=False):
            self.n, self.temperature, self.top_p, self.max_tokens = n, temperature, top_p, max_tokens
            self.stop, self.logprobs, self.seed = stop, logprobs, seed
            self.include_stop_str_in_output = include_stop_str_in_output

    class LLM:
        instances: list[LLM] = []

        def __init__(self, model: str, **options) -> None:
            self.model, self.options = model, options
            self.loaded: dict[int, dict[str, Any]] = {}  # lora_int_id -> tensors, cached like vLLM does
            self.calls: list[dict[str, Any]] = []
            LLM.instances.append(self)

        def generate(self, prompts, sampling_params, lora_request=None, use_tqdm=True):
            params = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
            loras = lora_request if isinstance(lora_request, list) else [lora_request] * len(prompts)
            assert len(params) == len(prompts) == len(loras), "vLLM needs one SamplingParams/LoRARequest per prompt"
            self.calls.append({"prompts": prompts, "params": params, "loras": loras})
            return [self._one(p["prompt_token_ids"], sp, lr) for p, sp, lr in zip(prompts, params, loras)]

        def _one(self, prompt, params, lora):
            if lora.lora_int_id not in self.loaded:
                self.loaded[lora.lora_int_id] = read_adapter(lora.lora_path)
            weights = checksum(self.loaded[lora.lora_int_id])
            outputs = []
            for index in range(params.n):
                tokens, finish = standin_tokens(prompt, weights, index, params.max_tokens)
                logprobs = None
                if params.logprobs is not None:
                    logprobs = [{t: types.SimpleNamespace(logprob=standin_logprob(k))} for k, t in enumerate(tokens)]
                text = " ".join(map(str, tokens))
                outputs.append(
                    types.SimpleNamespace(text=text, token_ids=tokens, logprobs=logprobs, finish_reason=finish)
                )
            return types.SimpleNamespace(prompt_token_ids=prompt, outputs=outputs)

    vllm.LLM, vllm.SamplingParams, request.LoRARequest = LLM, SamplingParams, LoRARequest
    vllm.lora, lora.request = lora, request
    return {"vllm": vllm, "vllm.lora": lora, "vllm.lora.request": request}


# ---------------------------------------------------------------------------- the HTTP server
class StandInServer(ThreadingHTTPServer):
    """``vllm serve --enable-lora`` with runtime LoRA updating, on a free local port, in a thread.

    ``behaviour`` makes it misbehave: ``ok``, ``hang`` (answer completions only after ``release``),
    ``not_json``, ``no_choices``, ``bad_tokens``, ``out_of_vocabulary`` or ``no_runtime_lora`` (404 on the
    LoRA endpoints)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.adapters: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str, Any]] = []
        self.behaviour = "ok"
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> StandInServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()
        self._thread.join()

    def calls(self, path: str) -> list[Any]:
        return [body for _, p, body in self.log if p == path]


class _Handler(BaseHTTPRequestHandler):
    server: StandInServer

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server.log.append(("GET", self.path, None))
        if self.path != "/v1/models":
            return self._send(404, {"error": "not found"})
        data = [{"id": "base", "object": "model"}] + [{"id": n, "parent": "base"} for n in self.server.adapters]
        self._send(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.log.append(("POST", self.path, body))
        routes = {"/v1/load_lora_adapter": self._load, "/v1/unload_lora_adapter": self._unload,
                  "/v1/completions": self._complete}
        if self.path not in routes:
            return self._send(404, {"error": "not found"})
        if self.path.endswith("_lora_adapter") and self.server.behaviour == "no_runtime_lora":
            return self._send(404, {"detail": "Not Found"})
        routes[self.path](body)

    def _load(self, body) -> None:
        name = body["lora_name"]
        if name in self.server.adapters:
            return self._send(400, {"message": f"The lora adapter '{name}' has already been loaded."})
        try:
            tensors = read_adapter(body["lora_path"])
        except (OSError, ValueError) as error:
            return self._send(400, {"message": f"Loading lora {name} failed: {error}"})
        self.server.adapters[name] = {"path": body["lora_path"], "tensors": tensors}
        self._send_text(f"Success: LoRA adapter '{name}' added successfully.")

    def _unload(self, body) -> None:
        if self.server.adapters.pop(body["lora_name"], None) is None:
            return self._send(404, {"message": f"The lora adapter '{body['lora_name']}' cannot be found."})
        self._send_text(f"Success: LoRA adapter '{body['lora_name']}' removed successfully.")

    def _complete(self, body) -> None:
        behaviour = self.server.behaviour
        if behaviour == "hang":
            self.server.release.wait(30)
            return
        if behaviour == "not_json":
            return self._send_raw(200, b"<html>proxy error</html>", "application/json")
        adapter = self.server.adapters.get(body["model"])
        if adapter is None:
            return self._send(404, {"message": f"The model `{body['model']}` does not exist."})
        if behaviour == "no_choices":
            return self._send(200, {"id": "cmpl-1", "object": "text_completion"})
        weights = checksum(adapter["tensors"])
        choices = []
        for index in range(body["n"]):
            tokens, finish = standin_tokens(body["prompt"], weights, index, body["max_tokens"])
            if behaviour == "out_of_vocabulary":
                tokens = [t + 100_000 for t in tokens]
            names = [f"token_id:{t}" if behaviour != "bad_tokens" else "Ġword" for t in tokens]
            logprobs = {"tokens": names, "token_logprobs": [standin_logprob(k) for k in range(len(tokens))],
                        "top_logprobs": [{} for _ in tokens], "text_offset": list(range(len(tokens)))}
            choices.append({"index": index, "text": " ".join(map(str, tokens)), "logprobs": logprobs,
                            "finish_reason": finish})
        self._send(200, {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                         "choices": list(reversed(choices))})  # any order: the client sorts by index

    def _send(self, status: int, payload: Any) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json")

    def _send_text(self, text: str) -> None:
        self._send_raw(200, text.encode(), "text/plain")

    def _send_raw(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
