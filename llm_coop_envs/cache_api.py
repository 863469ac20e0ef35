"""How a KV cache goes into and comes out of a model's forward, on every supported transformers.

transformers renamed the forward argument and output field ``past_key_values`` to ``cache`` (the old
name warns in every call and is removed in 5.40). The name is read once from the installed library's
output class, so the trainer's decode loop and log-prob pass and the writing reward's language model
use whichever name it defines, with no warning. transformers is imported at the first use only:
importing ``llm_coop_envs`` must not import it.
"""

from __future__ import annotations

import functools
from typing import Any


def _cache_name() -> str:
    from transformers.modeling_outputs import CausalLMOutputWithPast

    return "cache" if "cache" in getattr(CausalLMOutputWithPast, "__dataclass_fields__", {}) else "past_key_values"


@functools.lru_cache(maxsize=None)
def cache_argument() -> str:
    """``"cache"`` on transformers that renamed it, else ``"past_key_values"``."""
    return _cache_name()


def cache_of(output: Any) -> Any:
    """The KV cache a forward returned (``use_cache=True``)."""
    return output[cache_argument()]


def passing(cache: Any) -> dict[str, Any]:
    """Keyword arguments that hand ``cache`` to a forward."""
    return {cache_argument(): cache}
