"""Generation backends behind one protocol; see :mod:`trainers.generation.base`."""

from trainers.generation.base import Completion, GenerationBackend, GenerationRequest, cut_at_stop

__all__ = ["Completion", "GenerationBackend", "GenerationRequest", "backend_from_config", "cut_at_stop", "make_backend"]


def make_backend(name: str, policies, **options) -> GenerationBackend:
    """``transformers`` (default, CPU/GPU) or ``vllm`` (GPU, ``pip install llm-coop-envs[vllm]``)."""
    if name == "transformers":
        from trainers.generation.transformers_backend import TransformersBackend

        return TransformersBackend(policies, **options)
    if name == "vllm":
        from trainers.generation.vllm_backend import VLLMBackend

        return VLLMBackend(policies, **options)
    raise ValueError(f"Unknown generation backend {name!r}; choose 'transformers' or 'vllm'.")


def backend_from_config(cfg, policies) -> GenerationBackend:
    """The backend ``cfg.backend`` names, with the settings of ``cfg`` that concern it."""
    if cfg.backend != "vllm":
        return make_backend(cfg.backend, policies, dtype=cfg.generation_dtype)
    return make_backend(
        "vllm", policies, mode=cfg.vllm_mode, url=cfg.vllm_url, dtype=cfg.generation_dtype,
        gpu_memory_fraction=cfg.vllm_gpu_memory_fraction, max_loras=cfg.vllm_max_loras,
        adapter_dir=cfg.vllm_adapter_dir, timeout_s=cfg.vllm_timeout_s,
    )
