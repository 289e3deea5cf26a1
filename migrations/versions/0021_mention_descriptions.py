"""A `contains` edge keeps the chunk's description of the entity in properties.description.

Forget restores a kept entity's description from a remaining mention; it read it back out of
the edge's text ("Document chunk mentions X: description"). Edges written from now on carry it
as a field (pipelines/cognify/extract.py, as a fact keeps its own description); this fills it in
once for the edges written before, by the rule forget used.

Numbered 0021, not 0020: another branch of the same session may take 0020 (renumber on merge).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05
"""

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "UPDATE edges SET properties = properties"
        " || jsonb_build_object('description', substr(edge_text, position(': ' in edge_text) + 2))"
        " WHERE relationship = 'contains' AND edge_text LIKE 'Document chunk mentions %'"
        " AND position(': ' in edge_text) > 0 AND coalesce(properties->>'description', '') = ''")


def downgrade() -> None:
    op.execute("UPDATE edges SET properties = properties - 'description' WHERE relationship = 'contains'")
