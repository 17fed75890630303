package io.sluice.broker.command;

import io.sluice.broker.partition.Partition;
import io.sluice.broker.leadership.RebalanceOutcome;
import io.sluice.protocol.codecs.RebalanceRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A requested rebalance of one partition, served by its leader ({@link Partition#rebalance}); a follower names the
 * leader it knows, as for appends.
 */
final class RebalanceHandler extends DecodingHandler<RebalanceRequestDecoder>
{
    /** A rebalance blocks the partition's writes while the transfer runs: a caller may not ask for more than this. */
    static final long MAX_REBALANCE_TIMEOUT_MS = 60_000;

    RebalanceHandler(final CommandContext context)
    {
        super(context, RebalanceRequestDecoder::new);
    }

    @Override
    void handle(
        final RebalanceRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        final int partitionId = request.partitionId();
        final long timeoutMs = request.timeoutMs();
        if (timeoutMs < 1 || timeoutMs > MAX_REBALANCE_TIMEOUT_MS)
        {
            context.invalid(response, partitionId, context.pair(partitionId) + ": rebalance timeout must be 1.." +
                MAX_REBALANCE_TIMEOUT_MS + " ms, was " + timeoutMs);
            return;
        }
        final Partition partition = context.partitionOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        // On the admin executor: a transfer first stops the partition's exporters, which waits for an export in
        // flight and closes the sinks (a Kafka producer's close can block), and this I/O thread serves every other
        // request of the connection meanwhile.
        final CompletableFuture<RebalanceOutcome> rebalanced =
            context.onAdminExecutor(partitionId, response, () -> partition.rebalance(Duration.ofMillis(timeoutMs)));
        if (rebalanced != null)
        {
            context.respondWhenDone(rebalanced, response, partitionId, ResponseWriters::rebalance);
        }
    }
}
