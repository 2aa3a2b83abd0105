"""A causal LM with transformers' calling convention over the stand-in
torch (fake_hf/): model(input_ids, past_key_values=..., use_cache=True,
logits_to_keep=...) -> .logits, .past_key_values. It checks that the cache
it is given holds the batch and the tokens fed before, and records every
call as (batch, tokens, tokens already cached, logits_to_keep)."""
import types

import torch
import transformers


class TinyLM:
    def __init__(self, layers=2, kv_heads=2, head_dim=4, vocab=100):
        self.config = types.SimpleNamespace(model_type="llama", vocab_size=vocab, hidden_size=8,
                                            num_hidden_layers=layers, num_attention_heads=2,
                                            num_key_value_heads=kv_heads, head_dim=head_dim,
                                            max_position_embeddings=4096, _name_or_path="tiny-lm")
        self.calls, self.evaluated = [], False
        self._params = [torch.Tensor((vocab, 8)), torch.Tensor((8, 8))]

    def parameters(self):
        return iter(self._params)

    def eval(self):
        self.evaluated = True
        return self

    def forward(self, input_ids, past_key_values=None, use_cache=True, logits_to_keep=0):
        b, t = input_ids.shape
        c = self.config
        if isinstance(past_key_values, transformers.DynamicCache):
            layers = past_key_values.to_legacy_cache()
        else:
            layers = past_key_values or ()
        past = layers[0][0].shape[2] if layers else 0
        assert not layers or all(k.shape[0] == b and k.shape[2] == past for k, _ in layers), (b, past)
        assert use_cache and input_ids.shape[1] >= 1
        self.calls.append((b, t, past, logits_to_keep))
        new = [(torch.Tensor((b, c.num_key_value_heads, t, c.head_dim)),) * 2 for _ in range(c.num_hidden_layers)]
        if isinstance(past_key_values, transformers.DynamicCache):
            for i, (k, v) in enumerate(new):
                past_key_values.update(k, v, i)
            cache = past_key_values
        else:
            cache = tuple((torch.cat([layers[i][0], k], 2), torch.cat([layers[i][1], v], 2)) if layers else (k, v)
                          for i, (k, v) in enumerate(new))
        return types.SimpleNamespace(logits=torch.Tensor((b, 1 if logits_to_keep else t, c.vocab_size)),
                                     past_key_values=cache)

    __call__ = forward
