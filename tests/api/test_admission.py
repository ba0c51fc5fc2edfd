"""Admission control on its own: first come, first served, woken when a slot frees, no slot lost to a waiter
that timed out or was cancelled."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from api.admission import Admission, ServerBusy


def test_waiters_are_served_in_arrival_order_as_soon_as_a_slot_frees() -> None:
    async def main() -> tuple[list[int], list[float]]:
        adm = Admission(1, wait_s=5.0)
        order: list[int] = []
        woke: list[float] = []
        release = threading.Event()
        holder = asyncio.create_task(adm.run(lambda: release.wait(10)))
        await asyncio.sleep(0.01)
        tasks = []
        for i in range(5):
            tasks.append(asyncio.create_task(adm.run(lambda i=i: order.append(i))))
            await asyncio.sleep(0.001)  # they arrive in this order
        await asyncio.sleep(0.05)
        assert order == [] and adm.running == 1
        t = time.monotonic()
        release.set()
        await asyncio.gather(holder, *tasks)
        woke.append(time.monotonic() - t)
        assert adm.running == 0
        return order, woke

    order, woke = asyncio.run(main())
    assert order == [0, 1, 2, 3, 4]
    assert woke[0] < 0.05  # handed over, not found by a 10 ms poll each


def test_a_waiter_past_its_wait_gets_busy_and_a_cancelled_one_leaves_no_slot_taken() -> None:
    async def main() -> None:
        adm = Admission(1, wait_s=0.1)
        release = threading.Event()
        holder = asyncio.create_task(adm.run(lambda: release.wait(10)))
        await asyncio.sleep(0.01)
        with pytest.raises(ServerBusy) as busy:
            await adm.run(lambda: 0)
        assert busy.value.retry_after == 1
        cancelled = asyncio.create_task(adm.run(lambda: 0))  # its client hangs up while it waits
        await asyncio.sleep(0.01)
        cancelled.cancel()
        release.set()
        await holder
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert adm.running == 0
        assert await adm.run(lambda: 8) == 8 and adm.running == 0

    asyncio.run(main())


def test_a_job_cancelled_before_its_thread_picked_it_up_gives_its_slot_back() -> None:
    """A client that hangs up in the moment between being handed a slot and its job starting (the job still in
    the executor's queue) must not keep the slot: before, `running` stayed up for good and, after `limit` such
    hang-ups, every query got 503."""
    async def main() -> int:
        adm = Admission(1, wait_s=0.5)
        release = threading.Event()
        busy = adm.executor.submit(release.wait, 10)  # the one thread is taken, so the admitted job must queue
        ran: list[int] = []
        task = asyncio.create_task(adm.run(lambda: ran.append(1)))
        await asyncio.sleep(0.05)
        assert adm.running == 1
        task.cancel()  # what the disconnect watcher does
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        busy.result(5)
        await asyncio.sleep(0.05)
        assert ran == []
        assert await adm.run(lambda: 7) == 7  # the slot is free again: no ServerBusy
        return adm.running

    assert asyncio.run(main()) == 0
