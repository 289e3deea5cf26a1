"""The agent-memory decorator (SPEC 8b) against a stand-in broker client (no Celery needed)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import threading
import time

import pytest

from engram.tasks.agent_memory import MEMORY_TASK, TRACE_TASK, agent_memory, current_memory, memory_prompt


class Result:
    def __init__(self, value=None, error=None, delay=0.0):
        self.value, self.error, self.delay = value, error, delay

    def get(self, timeout=None):
        time.sleep(self.delay)
        if self.error:
            raise self.error
        return self.value


class FakeApp:
    """Records sent tasks; answers memory requests with text naming the query."""

    def __init__(self, fail=False):
        self.fail = fail
        self.sent = []
        self.lock = threading.Lock()

    def send_task(self, name, kwargs):
        with self.lock:
            self.sent.append((name, kwargs))
        if name == MEMORY_TASK:
            if self.fail:
                return Result(error=TimeoutError("no worker"))
            return Result({"memory": f"memory for {kwargs['query']}"}, delay=random.uniform(0, 0.02))
        return Result()


def test_fifty_concurrent_async_calls_each_see_only_their_own_memory():
    app = FakeApp()

    @agent_memory(app, dataset="kb", user="alice", session_id="s1")
    async def agent(question: str) -> str:
        await asyncio.sleep(random.uniform(0, 0.02))  # interleave with the other calls
        return memory_prompt(question)

    async def main():
        return await asyncio.gather(*(agent(f"q{i}") for i in range(50)))

    prompts = asyncio.run(main())
    for i, prompt in enumerate(prompts):
        assert prompt == f"Additional Memory Context:\nmemory for q{i}\n\nOriginal Input:\nq{i}"
    traces = [kw for name, kw in app.sent if name == TRACE_TASK]
    assert len(traces) == 50 and len({t["trace_id"] for t in traces}) == 50
    assert sorted(t["inputs"] for t in traces) == sorted(repr({"args": (f"q{i}",), "kwargs": {}}) for i in range(50))
    assert current_memory() == ""


def test_concurrent_sync_calls_in_threads_are_isolated_too():
    app = FakeApp()
    seen = {}

    @agent_memory(app, dataset="kb")
    def agent(question):
        time.sleep(random.uniform(0, 0.01))
        seen[question] = current_memory()
        return "ok"

    threads = [threading.Thread(target=agent, args=(f"t{i}",)) for i in range(20)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert seen == {f"t{i}": f"memory for t{i}" for i in range(20)}


def test_a_failing_retrieval_means_empty_memory_and_the_host_result_is_intact():
    app = FakeApp(fail=True)

    @agent_memory(app, dataset="kb")
    def agent(question):
        return memory_prompt(question) + "!"

    assert agent("hello") == "hello!"
    [(name, trace)] = [(n, kw) for n, kw in app.sent if n == TRACE_TASK]
    assert trace["result"] == "hello!" and trace["error"] is None


def test_an_error_in_the_host_function_is_traced_and_raised_unchanged():
    app = FakeApp()

    @agent_memory(app, dataset=lambda q, **kw: kw.get("tenant", "kb"), user="bob")
    def agent(question, tenant=None):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        agent("x", tenant="acme")
    [memory_request] = [kw for n, kw in app.sent if n == MEMORY_TASK]
    [trace] = [kw for n, kw in app.sent if n == TRACE_TASK]
    assert memory_request["dataset"] == "acme" and memory_request["user"] == "bob"
    assert trace["error"] == "KeyError: 'boom'" and trace["result"] is None


def test_importing_the_module_starts_nothing():
    code = "import sys, engram.tasks.agent_memory; print('engram.celery_app' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ opt-in injection into litellm


class SentToModel:
    """A litellm callback recording the input litellm hands to the provider (here its mock)."""

    def __init__(self):
        import litellm
        from litellm.integrations.custom_logger import CustomLogger

        sent = self.sent = []

        class Capture(CustomLogger):
            def log_pre_api_call(self, model, messages, kwargs):
                sent.append(kwargs["input"])

        self.callback = Capture()
        litellm.callbacks.append(self.callback)

    def close(self):
        import litellm

        litellm.callbacks.remove(self.callback)


@pytest.fixture
def sent_to_model():
    capture = SentToModel()
    yield capture.sent
    capture.close()


async def _ask_model(question: str, **kw) -> str:
    import litellm

    reply = await litellm.acompletion(model="openai/gpt-4o-mini", mock_response=f"answer to {question}",
                                      messages=[{"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": question}], **kw)
    return reply.choices[0].message.content


def test_injection_puts_each_calls_memory_into_the_litellm_calls_inside_it(sent_to_model):
    app = FakeApp()

    @agent_memory(app, dataset="kb", user="alice", session_id="s1", inject=True)
    async def agent(question: str) -> str:
        await asyncio.sleep(random.uniform(0, 0.01))
        return await _ask_model(question)

    async def main():
        return await asyncio.gather(*(agent(f"q{i}") for i in range(10)))

    answers = asyncio.run(main())
    assert answers == [f"answer to q{i}" for i in range(10)]
    by_question = {m[-1]["content"].rsplit("\n", 1)[-1]: m for m in sent_to_model}
    assert len(by_question) == 10
    for i in range(10):
        system, user = by_question[f"q{i}"]
        assert system == {"role": "system", "content": "Be brief."}
        assert user == {"role": "user", "content": f"Additional Memory Context:\nmemory for q{i}\n\nOriginal Input:\nq{i}"}
    traces = [kw for name, kw in app.sent if name == TRACE_TASK]
    assert sorted(t["memory"] for t in traces) == sorted(f"memory for q{i}" for i in range(10))


def test_without_the_flag_or_outside_a_decorated_call_litellm_requests_pass_unchanged(sent_to_model):
    app = FakeApp()

    @agent_memory(app, dataset="kb", inject=True)
    async def injected(question):
        return await _ask_model(question)

    @agent_memory(app, dataset="kb")  # no inject: the host uses memory_prompt() itself
    async def plain(question):
        return await _ask_model(memory_prompt(question))

    asyncio.run(injected("first"))  # installs the callback
    asyncio.run(plain("second"))
    asyncio.run(_ask_model("third"))
    contents = [m[-1]["content"] for m in sent_to_model]
    assert contents[1] == "Additional Memory Context:\nmemory for second\n\nOriginal Input:\nsecond"  # once, not twice
    assert contents[2] == "third"


def test_failed_retrieval_injects_nothing_and_an_existing_memory_prompt_is_not_doubled(sent_to_model):
    @agent_memory(FakeApp(fail=True), dataset="kb", inject=True)
    async def agent(question):
        return await _ask_model(question)

    assert asyncio.run(agent("plain")) == "answer to plain"
    assert sent_to_model[-1][-1]["content"] == "plain"


def test_inject_memory_keeps_the_callers_messages_and_handles_every_shape():
    from engram.tasks.agent_memory import inject_memory

    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"}]
    out = inject_memory(messages, "M")
    assert out[2]["content"] == "Additional Memory Context:\nM\n\nOriginal Input:\nc" and out[0]["content"] == "a"
    assert messages[2]["content"] == "c"  # not changed in place
    assert inject_memory(out, "M") is out  # already there: left alone
    parts = inject_memory([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "M")
    assert parts[0]["content"][0]["text"].startswith("Additional Memory Context:\nM") and len(parts[0]["content"]) == 2
    assert inject_memory([{"role": "system", "content": "s"}], "M")[0] == {
        "role": "system", "content": "Additional Memory Context:\nM"}
    assert inject_memory(messages, "") is messages
