"""What `engram worker` starts: the api queue always on threads of its own, names unique."""

from engram.cli.worker import plan
from engram.settings import Settings


def _settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


def test_default_worker_is_a_pipeline_pool_plus_an_api_thread_pool():
    s = _settings()
    pipeline, api = plan(s, concurrency=2)
    assert set(pipeline.queues) == {"ingest", "llm", "embed", "maintenance"}
    assert pipeline.pool is None and pipeline.concurrency == 2 and pipeline.nice == s.pipeline_nice > 0
    assert api.queues == ("celery",) and api.pool == "threads" and api.concurrency == s.api_threads
    assert api.nice == 0
    name = pipeline.hostname.split("@")[0]
    assert api.hostname == f"{name}-api@%h"


def test_generated_names_differ_and_given_names_are_kept():
    s = _settings()
    assert plan(s)[0].hostname != plan(s)[0].hostname
    pipeline, api = plan(s, hostname="box1@%h")
    assert (pipeline.hostname, api.hostname) == ("box1@%h", "box1-api@%h")


def test_queue_subsets():
    s = _settings()
    (only_api,) = plan(s, queues="api")
    assert only_api.queues == ("celery",) and only_api.pool == "threads" and only_api.concurrency == s.api_threads
    (llm,) = plan(s, queues="llm", pool="threads", concurrency=16)
    assert llm.queues == ("llm",) and llm.pool == "threads" and llm.nice == s.pipeline_nice
    (shared,) = plan(s, queues="ingest,celery", api_threads=0)
    assert shared.queues == ("ingest", "celery") and shared.nice == 0
