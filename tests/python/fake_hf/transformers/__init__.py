"""A stand-in for transformers' DynamicCache (test_generate.py): a key and a
value tensor per layer, grown by update along the tokens."""
import torch

__version__ = "0.0-fake"


class DynamicCache:
    def __init__(self):
        self.key_cache, self.value_cache = [], []

    def update(self, k, v, layer):
        if layer == len(self.key_cache):
            self.key_cache.append(k)
            self.value_cache.append(v)
        else:
            self.key_cache[layer] = torch.cat([self.key_cache[layer], k], dim=2)
            self.value_cache[layer] = torch.cat([self.value_cache[layer], v], dim=2)
        return self.key_cache[layer], self.value_cache[layer]

    def get_seq_length(self):
        return self.key_cache[0].shape[2] if self.key_cache else 0

    def to_legacy_cache(self):
        return tuple(zip(self.key_cache, self.value_cache))
