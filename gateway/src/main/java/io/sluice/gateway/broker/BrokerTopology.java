package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionStatus;

import java.util.List;

/** One broker's answer to a topology request: its view of each partition it hosts. */
public record BrokerTopology(int brokerId, List<PartitionStatus> partitions)
{
}
