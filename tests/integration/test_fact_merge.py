"""An edge's description merges the same way within a document and across documents: the first
non-empty description wins and the edge's text follows it (issue 9)."""

from __future__ import annotations

from sqlalchemy import text

FIRST = "Alice Moreau is the CEO of Harbor Dynamics."
SECOND = "Alice Moreau is the CEO of Harbor Dynamics, the robot maker."


def _ceo_edge(store, dataset_name: str) -> tuple[str, str]:
    with store.unit_of_work() as uow:
        row = uow.conn.execute(text(
            "SELECT g.properties->>'description', g.edge_text FROM edges g JOIN datasets d ON d.id = g.dataset_id"
            " WHERE d.name = :n AND g.relationship = 'ceo_of'"), {"n": dataset_name}).one()
    return row[0], row[1]


def test_an_edge_keeps_its_first_description_within_and_across_documents(client, store, dataset_name):
    within, across = f"{dataset_name}-within", f"{dataset_name}-across"
    client.remember(f"{FIRST} {SECOND}", dataset=within, background=False)
    for content in (FIRST, SECOND):
        client.remember(content, dataset=across, background=False)
    expected = (FIRST, f"Alice Moreau ceo of Harbor Dynamics: {FIRST}")
    assert _ceo_edge(store, within) == expected
    assert _ceo_edge(store, across) == expected
