package io.sluice.broker.control;

import io.sluice.broker.exporting.ExportingView;
import io.sluice.protocol.codecs.ExportingState;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.helpers.NOPLogger;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Runs a control replica's apply of exporting changes on a scratch {@link ControlState} that tells nobody: the encoded
 * entry of a pause of every partition and of a resume listing them, decoded and taken as the apply thread does, with
 * a version waiter per partition as an operator's pairs wait. An operator's first pause after a start otherwise runs
 * this code for the first time on every broker at once, interpreted (issue 30: the brokers' part of the first pause
 * was ~300 ms against ~35 ms warm). The broker's own state, log and exporters are untouched.
 */
public final class ApplyPathWarmUp
{
    private ApplyPathWarmUp()
    {
    }

    /**
     * Applies {@code rounds} exporting changes for {@code partitionCount} partitions to a scratch state of
     * {@code brokerId}; returns the number of version waits they completed.
     */
    public static int run(final int brokerId, final int partitionCount, final int rounds)
    {
        final ControlState scratch = new ControlState(brokerId, partitionCount, (partitionId) -> { }, NOPLogger.NOP_LOGGER);
        final BitSet every = new BitSet();
        every.set(1, partitionCount + 1);
        int completed = 0;
        for (int round = 1; round <= rounds; round++)
        {
            final List<CompletableFuture<ExportingStamp>> waits = new ArrayList<>(partitionCount);
            for (int p = 1; p <= partitionCount; p++)
            {
                waits.add(scratch.awaitVersion(p, round));
            }
            final ExportingChange change = round % 2 == 1 ? ExportingChange.ofAll(round, ExportingState.PAUSED) :
                new ExportingChange(round, ExportingState.EXPORTING, false, every);
            final ByteBuffer entry = ControlEntries.exportingChange(change, brokerId, ControlGroup.epochMicros(Clock.systemUTC()))
                .getContent().asReadOnlyByteBuffer();
            try
            {
                scratch.apply(round, new UnsafeBuffer(entry, entry.position(), entry.remaining()));
            }
            catch (final IOException e)
            {
                throw new IllegalStateException("a warm-up exporting change did not decode", e);
            }
            completed += (int)waits.stream().filter((wait) -> wait.isDone() && !wait.isCompletedExceptionally()).count();
        }
        return completed;
    }

    /**
     * Runs {@code rounds} times, for each partition, the check that its exporters obey a pause and a soft pause (which
     * only passes the gates: it completes at once unless an export or a positions proposal is in flight, and is not
     * waited for); returns how many completed at once.
     */
    public static int obeyChecks(final Collection<ExportingView> partitions, final int rounds)
    {
        int obeyed = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (final ExportingView partition : partitions)
            {
                obeyed += partition.awaitObeyed(ExportingState.PAUSED).isDone() ? 1 : 0;
                obeyed += partition.awaitObeyed(ExportingState.SOFT_PAUSED).isDone() ? 1 : 0;
            }
        }
        return obeyed;
    }
}
