package io.sluice.qa.cluster;

import io.sluice.protocol.cluster.PartitionReplica;

/** One target of a pause/resume answer: {@code outcome} is SUCCEEDED, FAILED or TIMED_OUT. */
public record PairOutcome(PartitionReplica pair, String outcome, String error)
{
}
