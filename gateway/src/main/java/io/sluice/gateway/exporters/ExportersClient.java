package io.sluice.gateway.exporters;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Asks one partition leader how its exporters are doing; no retry. Futures fail with
 * {@link io.sluice.gateway.broker.BrokerErrorException} for an ErrorResponse (a follower answers NOT_LEADER),
 * {@link io.sluice.gateway.broker.MalformedResponseException} for an undecodable answer, and the transport's
 * timeout / unreachable exceptions. Thread-safe.
 */
public interface ExportersClient
{
    CompletableFuture<PartitionExporters> status(int brokerId, int partitionId, Duration timeout);
}
