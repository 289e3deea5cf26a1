"""build_truth_subspace as an improve stage (SPEC 6.3): debounced on the dataset's lessons."""

from __future__ import annotations

from engram.pipelines.improve import truth


def gate(uow, ctx):
    if not uow.learning.truth_due([ctx.dataset_id]):
        return ("already_completed", "lessons unchanged and every chunk stamped")
    return None


def compute(_inputs, ctx) -> dict:
    ports = truth.RepositoryTruthPorts(ctx.ports.read, ctx.ports.write)
    return truth.build(ports, ctx.ports.embedder().embed, ctx.dataset_id)
