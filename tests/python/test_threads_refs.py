"""Threads and reference counting (ctest `python`)."""
import sys
import threading

import numpy as np

import shortc
from conftest import TINY, read_ids

CALLS = 10_000


def rss_bytes():
    """The process's resident set size, from /proc/self/statm."""
    import os
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_threads_share_a_model_and_its_sessions(tiny):
    ids = read_ids("t.txt")[:64]
    want = tiny.session().forward(ids)
    other = shortc.compile(TINY, backend="ref").random_weights(2)
    want_other = other.session().forward(ids)
    shared = tiny.session()
    errors, results = [], []

    def work(model, expect, i):
        try:
            own = model.session()
            for _ in range(20):
                own.reset()
                results.append(np.array_equal(own.forward(ids), expect))
                shared.forward(ids[:1])  # a session shared by every thread: calls are serialised
                shared.reset()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=((tiny, want) if i % 2 else (other, want_other)) + (i,))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 160 and all(results)


def test_gil_is_released_during_runs(tiny):
    # a long nll on one thread lets another thread run Python meanwhile
    ids = read_ids("t.txt")
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    s = tiny.session()
    for _ in range(3):
        s.nll(ids, mode="sliding", stride=8)
    done.set()
    t.join()
    assert len(ticks) > 5


def test_no_leak_over_10000_calls(tiny):
    s = tiny.session()
    ids = np.array([3, 1, 4], dtype=np.int32)
    out = np.empty((3, tiny.vocab), dtype=np.float32)
    refs = (sys.getrefcount(ids), sys.getrefcount(out), sys.getrefcount(s), sys.getrefcount(tiny))

    def calls(n):
        for i in range(n):
            s.reset()
            s.forward(ids, out=out)
            try:
                s.forward([1, 300])
            except shortc.Error:
                pass
            if i % 10 == 0:
                s.nll(ids)
                tiny.session().generate(ids, max_new=2)
                tiny.info

    # a first round settles the allocators (Python's and malloc's pools grow to a plateau of about 1 MB);
    # a leak then grows the second round by as much again
    calls(CALLS)
    before = rss_bytes()
    calls(CALLS)
    grown = rss_bytes() - before
    print("rss growth over %d calls after %d: %d bytes" % (CALLS, CALLS, grown))
    assert (sys.getrefcount(ids), sys.getrefcount(out), sys.getrefcount(s), sys.getrefcount(tiny)) == refs
    assert grown < 256 << 10, "RSS grew by %d bytes over %d calls" % (grown, CALLS)


def test_threads_run_simulator_models_side_by_side():
    # two models on the simulator (each with its own context and worker pool) driven from two threads at once
    ids = np.arange(40, dtype=np.int32) % 256
    models = [shortc.compile(TINY, backend="sim", sim_threads=2).random_weights(1 + i) for i in range(2)]
    want = [m.session().forward(ids) for m in models]
    same = [[], []]

    def work(i):
        s = models[i].session()
        for _ in range(4):
            s.reset()
            same[i].append(np.array_equal(s.forward(ids), want[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert same == [[True] * 4, [True] * 4]
    assert not np.array_equal(want[0], want[1])
