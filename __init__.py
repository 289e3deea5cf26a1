"""Engram: a Celery memory-processing backend for AI agents (graph + vectors in Postgres)."""

__version__ = "0.1.0"
