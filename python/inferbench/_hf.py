"""A Hugging Face transformers causal LM as the callables of
inferbench.generate: model(input_ids, past_key_values=..., use_cache=True)
on random token ids, with a DynamicCache (or the legacy tuple of (key,
value) per layer), a batch row a sequence. transformers and torch are
imported when hf_generation is called, never when inferbench is."""

import inspect

from ._errors import InferbenchError
from ._generate import cpus_allowed


def _import_transformers():
    try:
        import torch
        import transformers
    except ImportError as e:
        raise InferbenchError(f"hf_generation needs torch and transformers (pip install transformers): {e}") from None
    return torch, transformers


def _legacy(cache):
    """The cache as a tuple of (key, value) per layer, [batch, heads, tokens, dim]."""
    if cache is None or isinstance(cache, tuple):
        return cache
    if hasattr(cache, "to_legacy_cache"):
        return cache.to_legacy_cache()
    return tuple((layer.keys, layer.values) for layer in cache.layers)  # transformers 5


class _State:
    """The cache of the sequences decoded together, and the random ids."""

    def __init__(self, torch, transformers, model, device, cache_kind, seed, vocab):
        self.torch, self.transformers, self.model = torch, transformers, model
        self.device, self.cache_kind, self.vocab = device, cache_kind, vocab
        self.generator = torch.Generator(device="cpu").manual_seed(seed)
        self.cache, self.length, self.n_seqs, self.ids = None, 0, 1, None
        params = inspect.signature(model.forward).parameters
        # Logits of the last token only, where the model can (what a
        # server asks for); else the whole prompt's.
        self.extra = {"logits_to_keep": 1} if "logits_to_keep" in params else (
            {"num_logits_to_keep": 1} if "num_logits_to_keep" in params else {})
        self.set_sequences(1, 1)

    def _empty_cache(self):
        return self.transformers.DynamicCache() if self.cache_kind == "dynamic" else None

    def _forward(self, ids):
        with self.torch.inference_mode():
            out = self.model(ids, past_key_values=self.cache, use_cache=True, **self.extra)
        self.cache = out.past_key_values

    def clear(self):
        self.cache, self.length = self._empty_cache(), 0

    def prefill(self, seq, pos, n):
        if seq != 0 or pos != self.length:
            raise ValueError(f"prefill of sequence {seq} at {pos}: the cache holds sequence 0 at {self.length}")
        self._forward(self.ids[:1, pos:pos + n])
        self.length += n

    def step(self, n_seqs, pos):
        if n_seqs != self.n_seqs or pos != self.length:
            raise ValueError(f"a step of {n_seqs} sequences at {pos}: the cache holds {self.n_seqs} at {self.length}")
        self._forward(self.ids[:n_seqs, pos:pos + 1])
        self.length += 1

    def fork(self, n_seqs, n_pos):
        if n_pos != self.length:
            raise ValueError(f"fork of {n_pos} positions: the cache holds {self.length}")
        with self.torch.inference_mode():
            legacy = tuple((k.expand(n_seqs, -1, -1, -1).contiguous(), v.expand(n_seqs, -1, -1, -1).contiguous())
                           for k, v in _legacy(self.cache))
            if isinstance(self.cache, tuple):
                self.cache = legacy  # the model's own kind of cache, batch n_seqs
                return
            cache = self.transformers.DynamicCache()
            for layer, (k, v) in enumerate(legacy):
                cache.update(k, v, layer)
            self.cache = cache

    def set_sequences(self, n_seqs, ctx_per_seq):
        self.cache, self.ids = None, None
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()
        # The ids of every position of every sequence, made once, untimed:
        # a step slices them (a view), nothing is drawn in a timed call.
        ids = self.torch.randint(0, self.vocab, (n_seqs, ctx_per_seq), generator=self.generator)
        self.ids = ids.to(self.device)
        self.n_seqs = n_seqs
        self.clear()


def _info(torch, transformers, model, config, dtype, device, kind):
    n_kv = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    size = torch.tensor([], dtype=dtype).element_size()
    params = list(model.parameters())
    info = {
        "arch": config.model_type, "model_type": type(model).__name__,
        "weights_type": str(dtype).replace("torch.", ""), "kv_type": str(dtype).replace("torch.", ""),
        "n_params": sum(p.numel() for p in params), "model_bytes": sum(p.numel() * p.element_size() for p in params),
        "n_layers": config.num_hidden_layers, "n_embd": config.hidden_size, "n_vocab": config.vocab_size,
        "n_ctx_train": getattr(config, "max_position_embeddings", 0) or 0,
        "kv_bytes_per_token": 2 * config.num_hidden_layers * n_kv * head_dim * size,
        "runtime_version": f"torch {torch.__version__}, transformers {transformers.__version__}",
    }
    if device.type == "cpu":
        info["n_threads"], info["n_cpus_allowed"] = torch.get_num_threads(), cpus_allowed()
    else:
        info["n_gpu_layers"] = config.num_hidden_layers
    settings = {"cache": kind, "attention": str(getattr(config, "_attn_implementation", "") or "default")}
    return info, settings


def hf_generation(model, *, cache="dynamic", seed=42, name=None):
    """The keywords of inferbench.generate for a transformers causal LM
    (model(input_ids, past_key_values=..., use_cache=True) returning
    .past_key_values): prefill, step, clear, fork, set_sequences, device
    (the model's), info and settings. cache: "dynamic" (an empty
    DynamicCache after each clear) or "legacy" (None after each clear, then
    what the model returns: the tuple of (key, value) per layer of older
    transformers, a Cache of newer). The
    token ids are random (seed), drawn once per change of the sequences.

        r = inferbench.generate(**inferbench.hf_generation(model), prompt_tokens=512, new_tokens=128)
    """
    torch, transformers = _import_transformers()
    if cache not in ("dynamic", "legacy"):
        raise InferbenchError(f"cache={cache!r}: expected 'dynamic' or 'legacy'")
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "vocab_size"):
        raise InferbenchError(f"{type(model).__name__} has no .config with vocab_size: not a transformers causal LM")
    first = next(iter(model.parameters()), None)
    if first is None:
        raise InferbenchError(f"{type(model).__name__} has no parameters")
    device = first.device
    if device.type not in ("cpu", "cuda"):
        raise InferbenchError(f"the model is on {device.type}: cpu or cuda")
    model.eval()
    state = _State(torch, transformers, model, device, cache, seed, config.vocab_size)
    info, settings = _info(torch, transformers, model, config, first.dtype, device, cache)
    return {
        "prefill": state.prefill, "step": state.step, "clear": state.clear, "fork": state.fork,
        "set_sequences": state.set_sequences, "device": device.type, "device_id": device.index or 0,
        "info": info, "settings": settings, "name": name or getattr(config, "_name_or_path", "") or type(model).__name__,
    }
