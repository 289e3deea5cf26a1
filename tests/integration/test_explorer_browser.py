"""`engram explorer` in a real browser: Debian's chromium, headless, driven by Selenium through
its chromedriver. The demo corpus is remembered as `engram demo` does; the walk goes dataset →
document → entity graph → recall playground, then a second user's token finds nothing.
Screenshots land in the test's tmp directory (screenshots/)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import uuid

import pytest

from engram.cli.demo import remember_demo, settle_demo

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or DRIVER is None, reason=(
    "no chromium or chromedriver binary: apt-get install chromium chromium-driver (.ci/run does)"))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo(worker):
    tag = uuid.uuid4().hex[:8]
    owner, name = f"br-owner-{tag}", f"demo-{tag}"
    statuses = remember_demo(worker.client, dataset=name, user=owner).wait(timeout=1200)
    assert {s.status for s in statuses} == {"completed"}, statuses
    assert {done.status for _, done in settle_demo(worker.client, dataset=name, user=owner)} == {"completed"}
    return {"name": name, "owner": owner, "other": f"br-other-{tag}"}


@pytest.fixture(scope="module")
def explorer_url(worker, demo, tmp_path_factory):
    """`engram explorer` as a user starts it, with a token for the owner and one for another user."""
    folder = tmp_path_factory.mktemp("explorer")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({"owner-token": demo["owner"], "other-token": demo["other"]}))
    port = _port()
    log = open(folder / "explorer.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "engram.cli", "explorer", "--tokens", str(tokens),
                             "--port", str(port)], env=worker.env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (folder / "explorer.log").read_text()
            time.sleep(0.3)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(30)
    log.close()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1300,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.implicitly_wait(10)
    yield driver
    driver.quit()


def _login(browser, url: str, token: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{url}/login")
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "login").click()


def _rows(browser, table: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [r.text for r in browser.find_elements(By.CSS_SELECTOR, f"#{table} tr.fact")]


def test_a_user_walks_the_demo_from_dataset_to_recall(browser, explorer_url, demo, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    shots = tmp_path / "screenshots"
    shots.mkdir()
    _login(browser, explorer_url, "owner-token")
    assert browser.find_element(By.ID, "who").text == demo["owner"]
    browser.find_element(By.LINK_TEXT, demo["name"]).click()
    documents = browser.find_element(By.ID, "documents").text
    assert "05-harbor-dynamics-new-ceo-2024.md" in documents and "17-seabird-drone.md" in documents
    browser.save_screenshot(str(shots / "1-dataset.png"))

    browser.find_element(By.PARTIAL_LINK_TEXT, "05-harbor-dynamics-new-ceo-2024").click()
    chunk = browser.find_element(By.CSS_SELECTOR, "section.chunk")
    assert "Bob Lindqvist" in chunk.find_element(By.CSS_SELECTOR, ".entities").text
    browser.save_screenshot(str(shots / "2-document.png"))

    chunk.find_element(By.CSS_SELECTOR, ".entities").find_element(By.LINK_TEXT, "Harbor Dynamics").click()
    WebDriverWait(browser, 60).until(seen.presence_of_element_located((By.CSS_SELECTOR, "#graph[data-ready='1']")))
    drawn = browser.execute_script(
        "return window.engramGraph.body.data.nodes.get().map(function (n) { return n.label; });")
    assert {"Harbor Dynamics", "Bob Lindqvist", "Alice Moreau"} <= set(drawn), drawn
    assert browser.find_elements(By.CSS_SELECTOR, "#graph canvas")
    current = [r for r in _rows(browser, "current") if "ceo of" in r]
    former = [r for r in _rows(browser, "superseded") if "ceo of" in r]
    assert len(current) == 1 and "Bob Lindqvist" in current[0] and "current" in current[0], current
    assert any("Alice Moreau" in r and "superseded" in r for r in former), former
    browser.save_screenshot(str(shots / "3-entity-graph.png"))

    browser.find_element(By.LINK_TEXT, "Recall").click()
    browser.find_element(By.ID, "q").send_keys("Who is the CEO of Harbor Dynamics?")
    browser.find_element(By.ID, "ask").click()
    assert "routed" in browser.find_element(By.ID, "route").text
    ranking = browser.find_elements(By.CSS_SELECTOR, "#ranking tr")[1:]
    assert ranking and any("Bob Lindqvist" in r.text for r in ranking)
    browser.save_screenshot(str(shots / "4-recall.png"))
    assert sorted(p.name for p in shots.iterdir()) == ["1-dataset.png", "2-document.png", "3-entity-graph.png",
                                                        "4-recall.png"]


def test_another_users_token_sees_no_trace_of_the_demo(browser, explorer_url, demo, tmp_path):
    from selenium.webdriver.common.by import By

    _login(browser, explorer_url, "other-token")
    assert demo["name"] not in browser.page_source
    assert "No dataset yet" in browser.find_element(By.ID, "datasets").text
    browser.get(f"{explorer_url}/d/{demo['name']}/entities/Harbor%20Dynamics")
    assert browser.find_element(By.TAG_NAME, "h1").text == "404"
    assert "Lindqvist" not in browser.page_source and demo["name"] not in browser.page_source
    graph = browser.execute_script(
        "const r = await fetch(arguments[0], {headers: {Accept: 'application/json'}});"
        "return [r.status, await r.text()];", f"/d/{demo['name']}/entities/Harbor%20Dynamics")
    assert graph[0] == 404 and "Lindqvist" not in graph[1] and demo["name"] not in graph[1]
    browser.save_screenshot(str(tmp_path / "other-user.png"))
