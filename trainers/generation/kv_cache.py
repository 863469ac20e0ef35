"""A KV cache whose buffers are allocated once per generation, for the decode loop.

transformers' ``DynamicCache`` appends each step's keys and values with ``torch.cat``, which copies the
whole cache of every layer at every step: with 8 rows and a ~300-token prompt that is ~100 MB of copying
per decode step for SmolLM2-135M, as much memory traffic as a fifth of its weights. Here each layer holds
a buffer sized for the prompt plus every new token and writes each step's keys/values in place; attention
reads a view of the filled part (``[rows, heads, length, head_dim]``, the last two axes contiguous).

Rows can be dropped (:meth:`RowCache.keep_rows`) when they finish, so finished rows cost nothing more.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import Cache, DynamicLayer


class _PreallocatedLayer(DynamicLayer):
    """One layer's keys and values in fixed buffers; ``length`` positions are filled."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, capacity: int) -> None:
        super().__init__()
        rows, heads, length, _ = keys.shape
        self.dtype, self.device = keys.dtype, keys.device
        self._keys = keys.new_empty(rows, heads, capacity, keys.shape[-1])
        self._values = values.new_empty(rows, heads, capacity, values.shape[-1])
        self._keys[:, :, :length] = keys
        self._values[:, :, :length] = values
        self.length = length
        self.is_initialized = True
        self._expose()

    def _expose(self) -> None:
        self.keys = self._keys[:, :, : self.length]
        self.values = self._values[:, :, : self.length]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        end = self.length + key_states.shape[-2]
        if end > self._keys.shape[2]:
            raise RuntimeError(f"KV cache full: {end} positions needed, {self._keys.shape[2]} allocated.")
        self._keys[:, :, self.length : end] = key_states
        self._values[:, :, self.length : end] = value_states
        self.length = end
        self._expose()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.length

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Keep only ``rows`` (copies the filled part once, into buffers of the same capacity)."""
        capacity = self._keys.shape[2]
        keys, values = self._keys[rows, :, : self.length], self._values[rows, :, : self.length]
        self._keys = keys.new_empty(len(rows), keys.shape[1], capacity, keys.shape[-1])
        self._values = values.new_empty(len(rows), values.shape[1], capacity, values.shape[-1])
        self._keys[:, :, : self.length] = keys
        self._values[:, :, : self.length] = values
        self._expose()

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.keep_rows(beam_idx)

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self.keep_rows(indices)


class RowCache(Cache):
    """Every layer preallocated; built from the prefill's cache with each prompt's rows copied to its samples."""

    @staticmethod
    def supports(prefill: Cache) -> bool:
        """Only plain full-attention layers (no sliding window, offloading or quantisation)."""
        return bool(prefill.layers) and all(type(layer) is DynamicLayer for layer in prefill.layers)

    def __init__(self, prefill: Cache, row_index: torch.Tensor, new_tokens: int) -> None:
        self.__init_from_tensors([(layer.keys, layer.values) for layer in prefill.layers], row_index, new_tokens)

    @classmethod
    def from_tensors(cls, layers: list[tuple[torch.Tensor, torch.Tensor]], row_index: torch.Tensor,
                     new_tokens: int) -> RowCache:
        """From each layer's ``(keys, values)`` of the prompts (``[prompts, heads, length, head_dim]``)."""
        cache = cls.__new__(cls)
        cache.__init_from_tensors(layers, row_index, new_tokens)
        return cache

    def __init_from_tensors(self, layers: list[tuple[torch.Tensor, torch.Tensor]], row_index: torch.Tensor,
                            new_tokens: int) -> None:
        rows = [_PreallocatedLayer(keys[row_index], values[row_index], keys.shape[2] + new_tokens)
                for keys, values in layers]
        super().__init__(layers=rows)

    def keep_rows(self, rows: torch.Tensor) -> None:
        for layer in self.layers:
            layer.keep_rows(rows)
