package io.sluice.broker.exporting;

import java.util.concurrent.CountDownLatch;

/** An {@link ExportGate} entered by another thread, as the director's is (the gate's lock lets its own holder pass). */
final class GateHeldElsewhere
{
    private final CountDownLatch leave = new CountDownLatch(1);
    private final Thread thread;

    private GateHeldElsewhere(final ExportGate gate) throws InterruptedException
    {
        final CountDownLatch entered = new CountDownLatch(1);
        thread = new Thread(() ->
        {
            gate.enter();
            try
            {
                entered.countDown();
                leave.await();
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
            finally
            {
                gate.exit();
            }
        }, "gate-holder");
        thread.start();
        entered.await();
    }

    /** Returns once another thread is inside {@code gate}. */
    static GateHeldElsewhere enter(final ExportGate gate) throws InterruptedException
    {
        return new GateHeldElsewhere(gate);
    }

    /** Leaves the gate; returns once the holder has (and completed whoever waited to pass). */
    void exit() throws InterruptedException
    {
        leave.countDown();
        thread.join();
    }
}
