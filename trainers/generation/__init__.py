"""Generation backends behind one protocol; see :mod:`trainers.generation.base`."""

from trainers.generation.base import Completion, GenerationBackend, GenerationRequest, cut_at_stop

__all__ = ["Completion", "GenerationBackend", "GenerationRequest", "cut_at_stop", "make_backend"]


def make_backend(name: str, policies, **options) -> GenerationBackend:
    """``transformers`` (default, CPU/GPU) or ``vllm`` (GPU, ``pip install llm-coop-envs[vllm]``)."""
    if name == "transformers":
        from trainers.generation.transformers_backend import TransformersBackend

        return TransformersBackend(policies, **options)
    if name == "vllm":
        from trainers.generation.vllm_backend import VLLMBackend

        return VLLMBackend(policies, **options)
    raise ValueError(f"Unknown generation backend {name!r}; choose 'transformers' or 'vllm'.")
