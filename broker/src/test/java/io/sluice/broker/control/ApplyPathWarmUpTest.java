package io.sluice.broker.control;

import io.sluice.broker.exporting.ExportGate;
import io.sluice.broker.exporting.ExportingStates;
import io.sluice.broker.exporting.ExportingView;
import io.sluice.protocol.codecs.ExportingState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/** The start's warm-ups of the pause path: a scratch apply of exporting changes, and the partitions' obey checks. */
class ApplyPathWarmUpTest
{
    @Test
    void everyRoundsChangeReachesEveryPartitionsWaiter()
    {
        assertThat(ApplyPathWarmUp.run(0, 48, 16)).isEqualTo(16 * 48);
    }

    @Test
    void aClusterOfOnePartitionIsWarmedToo()
    {
        assertThat(ApplyPathWarmUp.run(2, 1, 3)).isEqualTo(3);
    }

    @Test
    void obeyChecksCountWhatCompletedAtOnceAndLeaveEveryPartitionExporting() throws InterruptedException
    {
        final ExportingView idle = new ExportingView(1, new Exporting(), new ExportGate());
        final ExportGate busyGate = new ExportGate();
        final ExportingView exporting = new ExportingView(2, new Exporting(), busyGate);
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch leave = new CountDownLatch(1);
        final Thread export = new Thread(() ->
        {
            busyGate.enter(); // an export in flight on partition 2
            entered.countDown();
            awaitQuietly(leave);
            busyGate.exit();
        });
        export.start();
        entered.await();
        try
        {
            assertThat(ApplyPathWarmUp.obeyChecks(List.of(idle, exporting), 3))
                .as("a pause a round for the idle partition, and a soft pause a round for both (it only waits for " +
                    "positions in flight); the pause of the exporting partition is not waited for")
                .isEqualTo(3 * 3);
        }
        finally
        {
            leave.countDown();
            export.join();
        }
        assertThat(idle.state()).isEqualTo(ExportingState.EXPORTING);
        assertThat(exporting.state()).isEqualTo(ExportingState.EXPORTING);
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** A control replica that holds EXPORTING at version 0 for every partition, caught up. */
    private static final class Exporting implements ExportingStates
    {
        @Override
        public ExportingState state(final int partitionId)
        {
            return ExportingState.EXPORTING;
        }

        @Override
        public long version(final int partitionId)
        {
            return 0;
        }

        @Override
        public boolean caughtUp()
        {
            return true;
        }

        @Override
        public boolean backupHeld()
        {
            return false;
        }
    }
}
