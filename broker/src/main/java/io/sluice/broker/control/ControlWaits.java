package io.sluice.broker.control;

import io.sluice.broker.errors.PartitionException;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.ratis.protocol.Message;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a command waits for on the control group, for {@link BackfillClaims} and {@link BackupHolds}: an entry
 * committed and applied on this replica with its apply's reply, or any other wait; each bounded by the admin timeout,
 * and each failure told as one {@link PartitionException} naming what waited: its own when it is one, TIMEOUT with the
 * group's leader as this replica knows it, UNAVAILABLE otherwise. Thread-safe.
 */
final class ControlWaits
{
    /** Reads an apply's reply. */
    @FunctionalInterface
    interface ReplyDecoder<T>
    {
        T decode(UnsafeBuffer bytes) throws IOException;
    }

    /** A committed entry's index and its apply's reply, once this replica applied it. */
    record Applied<T>(long index, T reply)
    {
    }

    private final int brokerId;
    private final ControlGroup control;
    private final Duration timeout;
    private final String notDone;

    /**
     * @param notDone what a timed-out wait did not reach, in its TIMEOUT message ("not applied", "not in place").
     */
    ControlWaits(final int brokerId, final ControlGroup control, final Duration timeout, final String notDone)
    {
        this.brokerId = brokerId;
        this.control = control;
        this.timeout = timeout;
        this.notDone = notDone;
    }

    /**
     * Commits {@code entry} and completes with its reply, read by {@code decoder}, once this replica applied it;
     * bounded and told as {@link #bounded}.
     */
    <T> CompletableFuture<Applied<T>> commit(final Message entry, final ReplyDecoder<T> decoder, final String what)
    {
        return bounded(control.commitWithReply(entry)
            .thenCompose((committed) ->
            {
                final T reply;
                try
                {
                    reply = decoder.decode(new UnsafeBuffer(committed.reply().toByteArray()));
                }
                catch (final IOException e)
                {
                    throw new CompletionException(e);
                }
                return control.awaitApplied(committed.index()).thenApply((applied) -> new Applied<>(committed.index(), reply));
            }), what);
    }

    /** {@code wait} bounded by the admin timeout; its failure told as a {@link PartitionException} about {@code what}. */
    <T> CompletableFuture<T> bounded(final CompletableFuture<T> wait, final String what)
    {
        return wait
            .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
            .exceptionally((failure) ->
            {
                throw failed(what, failure);
            });
    }

    private PartitionException failed(final String what, final Throwable failure)
    {
        final Throwable cause = Futures.unwrapAll(failure);
        if (cause instanceof PartitionException e)
        {
            return e;
        }
        if (cause instanceof TimeoutException)
        {
            return new PartitionException(ErrorCode.TIMEOUT, 0, -1, "broker " + brokerId + ": " + what +
                ": " + notDone + " here within " + timeout.toMillis() + " ms (no control group quorum? its leader is " +
                (control.leaderId() < 0 ? "unknown" : "broker " + control.leaderId()) + ")");
        }
        return new PartitionException(ErrorCode.UNAVAILABLE, 0, -1, "broker " + brokerId + ": " + what + ": " +
            cause.getMessage());
    }
}
