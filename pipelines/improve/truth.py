"""build_truth_subspace and the truth factor's inputs (SPEC 6.3). Pure: no Celery, no SQL.

Learnings (lesson statements) are normalised, identified, sorted and L2-normalised; slot
clustering with k = 8 gives the centroids; the epoch moves only when the centroids moved.
A chunk's coordinates are its cosines to the centroids, zero-padded to k, stamped with the
epoch AND the basis signature (sha256 of the sorted learning ids); a reader uses them only
when both match the live basis, so coordinates of an abandoned basis that happens to reach
the same epoch number are refused.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engram.pipelines.ids import learning_id
from engram.pipelines.recall.ranking import truth_score

K = 8
TOLERANCE = 1e-6
_WS = re.compile(r"\s+")

Vector = Sequence[float]


def normalise(text: str) -> str:
    return _WS.sub(" ", text or "").strip().casefold()


def unit(vector: Vector) -> list[float]:
    norm = math.sqrt(sum(float(x) * float(x) for x in vector))
    return [float(x) / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


def cosine(a: Vector, b: Vector) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return 0.0 if na == 0 or nb == 0 else sum(x * y for x, y in zip(a, b)) / (na * nb)


def signature(ids: Iterable[uuid.UUID]) -> str:
    return hashlib.sha256("\n".join(sorted(str(i) for i in ids)).encode()).hexdigest()


@dataclass(frozen=True)
class Learning:
    id: uuid.UUID
    text: str
    vector: tuple[float, ...]


def learnings(statements: Iterable[str], embed: Callable[[list[str]], Sequence[Vector]]) -> list[Learning]:
    """Distinct normalised statements, sorted by id, with unit vectors."""
    texts = {}
    for s in statements:
        text = normalise(s)
        if text:
            texts.setdefault(learning_id(text), text)
    ordered = sorted(texts.items(), key=lambda kv: str(kv[0]))
    vectors = embed([t for _, t in ordered]) if ordered else []
    return [Learning(i, t, tuple(unit(v))) for (i, t), v in zip(ordered, vectors)]


@dataclass
class Slot:
    centroid: list[float]
    count: int = 1


def cluster(vectors: Iterable[Vector], k: int = K) -> list[Slot]:
    """Slot clustering: the first k vectors open slots; each later one joins the nearest slot
    by cosine, centroid = normalise((count·old + new) / (count + 1))."""
    slots: list[Slot] = []
    for v in vectors:
        v = list(v)
        if len(slots) < k:
            slots.append(Slot(unit(v)))
            continue
        best = max(range(len(slots)), key=lambda i: (cosine(slots[i].centroid, v), -i))
        s = slots[best]
        s.centroid = unit([(s.count * c + x) / (s.count + 1) for c, x in zip(s.centroid, v)])
        s.count += 1
    return slots


def changed(old: Sequence[Vector], new: Sequence[Vector], tolerance: float = TOLERANCE) -> bool:
    if len(old) != len(new):
        return True
    return any(len(a) != len(b) or any(abs(x - y) > tolerance for x, y in zip(a, b)) for a, b in zip(old, new))


@dataclass
class Basis:
    """The live truth basis of a dataset (epoch 0 + no centroids = none built yet)."""

    epoch: int = 0
    signature: str = ""
    centroids: list[list[float]] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)

    @property
    def live(self) -> bool:
        return self.epoch > 0 and bool(self.centroids)


def next_basis(previous: Basis | None, found: Sequence[Learning], k: int = K) -> Basis:
    """The basis these learnings give; the epoch moves only when the centroids moved."""
    previous = previous or Basis()
    slots = cluster((l.vector for l in found), k)
    centroids = [s.centroid for s in slots]
    epoch = previous.epoch + 1 if changed(previous.centroids, centroids) or previous.epoch == 0 else previous.epoch
    return Basis(epoch, signature(l.id for l in found), centroids, [s.count for s in slots])


def coordinates(vector: Vector | None, centroids: Sequence[Vector], k: int = K) -> list[float]:
    """Cosine to each centroid, zero-padded to k."""
    coords = [cosine(vector, c) for c in centroids] if vector is not None else []
    return (coords + [0.0] * k)[:k]


def stamp_matches(row: Mapping, basis: Basis | None) -> bool:
    """A chunk's coordinates count only when its epoch AND signature are the live basis's."""
    return (basis is not None and basis.live and row.get("truth_alignment") is not None
            and row.get("truth_epoch") == basis.epoch and row.get("truth_signature") == basis.signature)


def scores(question_vector: Vector, rows: Iterable[Mapping], bases: Mapping[uuid.UUID, Basis]) -> dict:
    """Per chunk id, its truth score for the question; chunks without a live stamp are left out
    (neutral factor)."""
    out = {}
    query: dict[uuid.UUID, list[float]] = {}
    for row in rows:
        basis = bases.get(row.get("dataset_id"))
        if not stamp_matches(row, basis):
            continue
        if row["dataset_id"] not in query:
            query[row["dataset_id"]] = coordinates(question_vector, basis.centroids)
        out[row["id"]] = truth_score(list(row["truth_alignment"]), query[row["dataset_id"]])
    return out


def truth_hook(load_bases: Callable[[list[uuid.UUID]], Mapping[uuid.UUID, Basis]],
               embed_question: Callable[[str], Vector]):
    """A recall TruthHook: (question, chunk rows) → {chunk id: truth score}.

    Any failure to load the basis leaves ranking neutral: truth only re-weights, it never
    makes a recall fail.
    """

    def hook(question: str, rows: list[dict], question_vector: Callable[[], Vector] | None = None) -> dict:
        datasets = sorted({r["dataset_id"] for r in rows if r.get("truth_epoch") is not None}, key=str)
        if not datasets:
            return {}
        bases = load_bases(datasets)
        if not any(b.live for b in bases.values()):
            return {}
        # The recall has usually embedded the question already: its vector, not a second forward pass.
        return scores(question_vector() if question_vector is not None else embed_question(question), rows, bases)

    return hook


class TruthPorts:
    """The store side of a build (duck-typed). write_basis commits before stamping starts."""

    def lesson_statements(self, dataset_id: uuid.UUID) -> list[str]: ...
    def basis(self, dataset_id: uuid.UUID) -> Basis | None: ...
    def write_basis(self, dataset_id: uuid.UUID, basis: Basis, learnings: int) -> None: ...
    def unstamped(self, dataset_id: uuid.UUID, basis: Basis) -> int: ...
    def stamp_chunks(self, dataset_id: uuid.UUID, basis: Basis, limit: int) -> int: ...


def build(ports: TruthPorts, embed: Callable[[list[str]], Sequence[Vector]], dataset_id: uuid.UUID,
          batch: int = 5000) -> dict:
    """One build: centroids first, then chunk stamps. Debounced: same learnings and every chunk
    stamped → already_completed."""
    previous = ports.basis(dataset_id)
    statements = ports.lesson_statements(dataset_id)
    found = learnings(statements, embed)
    sig = signature(l.id for l in found)
    if previous is None and not found:
        return {"status": "already_completed", "reason": "no lessons in the dataset", "learnings": 0}
    same = previous is not None and previous.signature == sig and len(previous.centroids) == min(len(found), K)
    if same and (not previous.live or ports.unstamped(dataset_id, previous) == 0):
        return {"status": "already_completed", "reason": "lessons unchanged and every chunk stamped",
                "learnings": len(found), "epoch": previous.epoch}
    basis = previous if same else next_basis(previous, found)
    if not same:
        ports.write_basis(dataset_id, basis, len(statements))  # the count the debounce compares
    stamped = 0
    while basis.live:
        n = ports.stamp_chunks(dataset_id, basis, batch)
        stamped += n
        if n < batch:
            break
    return {"status": "completed", "learnings": len(found), "epoch": basis.epoch, "signature": basis.signature,
            "slots": len(basis.centroids), "chunks_stamped": stamped}


class RepositoryTruthPorts:
    """TruthPorts over units of work: `read()` / `write()` open one each (write() is the
    fence-checked one under an improve claim), so the basis commits before any stamp."""

    def __init__(self, read, write):
        self.read, self.write = read, write

    def lesson_statements(self, dataset_id):
        with self.read() as uow:
            return uow.learning.lesson_statements(dataset_id)

    def basis(self, dataset_id):
        with self.read() as uow:
            return uow.learning.bases([dataset_id]).get(dataset_id)

    def write_basis(self, dataset_id, basis, learnings):
        with self.write() as uow:
            uow.learning.write_basis(dataset_id, basis, learnings)

    def unstamped(self, dataset_id, basis):
        with self.read() as uow:
            return uow.learning.unstamped(dataset_id, basis)

    def stamp_chunks(self, dataset_id, basis, limit):
        with self.write() as uow:
            return uow.learning.stamp_chunks(dataset_id, basis, limit)
