from engram.pipelines.backpressure import backlog


def test_quiet_within_the_bound():
    assert backlog(open_runs=200, finished_in_window=0, new_runs=10, bound=200) is None


def test_over_the_bound_reports_what_is_ahead_and_an_eta_from_the_drain_rate():
    # 600 done in 300 s = 2 runs/s; 500 ahead + 10 new -> 255 s
    assert backlog(open_runs=500, finished_in_window=600, new_runs=10, bound=200) == {
        "queued_ahead": 500, "eta_s": 255.0}


def test_no_recent_completion_means_no_eta_rather_than_a_made_up_one():
    assert backlog(open_runs=500, finished_in_window=0, new_runs=1, bound=0) == {"queued_ahead": 500, "eta_s": None}
