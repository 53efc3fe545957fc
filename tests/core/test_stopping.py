"""``core.stopping``: the stop a signal asks for, heard between two steps and never a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from vaultsync.core import stopping

STORM = textwrap.dedent(
    """
    import os, signal, sys, time
    from vaultsync.core import stopping

    with stopping.stop_on_signals() as stop:
        sender = os.fork()
        if sender == 0:  # the storm: SIGTERM after SIGTERM while the parent sleeps in wait()
            for _ in range(100_000):
                try:
                    os.kill(os.getppid(), signal.SIGTERM)
                except ProcessLookupError:
                    break
            os._exit(0)
        for _ in range(20_000):
            stop.wait(0.0001)
        os.waitpid(sender, 0)
    print(stop.signal_name)
    """
)


def test_a_signal_storm_during_waits_never_hangs() -> None:
    """Signals landing at any point of ``Stop.wait`` are heard, and the waiter goes on."""
    done = subprocess.run(
        [sys.executable, "-c", STORM], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "SIGTERM"), done.stderr


def test_a_signal_wakes_a_long_wait() -> None:
    """A stop asked for during a long wait ends the wait with ``True``."""
    with stopping.stop_on_signals() as stop:
        previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        try:
            assert stop.wait(60.0) is True
        finally:
            signal.signal(signal.SIGALRM, previous)
    assert stop.signal_name == "SIGINT"


def test_signals_are_restored_after_the_command() -> None:
    """Outside the block, SIGINT and SIGTERM have their earlier handlers again."""
    before = [signal.getsignal(sig) for sig in stopping.STOP_SIGNALS]
    with stopping.stop_on_signals():
        assert [signal.getsignal(sig) for sig in stopping.STOP_SIGNALS] != before
    assert [signal.getsignal(sig) for sig in stopping.STOP_SIGNALS] == before
