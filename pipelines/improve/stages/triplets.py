"""triplet_enrichment: one embeddable sentence per entity-to-entity edge."""

from __future__ import annotations


def triplet_text(source: str, relationship: str, target: str) -> str:
    return f"{source} {relationship.replace('_', ' ')} {target}"
